import type { Server } from 'node:http';
import type { Http2Server } from 'node:http2';
import { cors as connectCors, type ConnectRouter } from '@connectrpc/connect';
import { fastifyConnectPlugin } from '@connectrpc/connect-fastify';
import fastifyCors from '@fastify/cors';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { projectRouteCaller } from '../admin/access';
import { operatorTokenCheck } from '../auth/operator-token';
import type { Deps } from '../deps';
import { clientIpContext } from '../limits/client-context';
import { consolePages } from '../console/static';
import { consoleCookieOf, sessionCredential } from '../console/session-cookie';
import { playground } from '../playground';
import { favicon } from '../favicon';
import { ownDocs } from '../own-docs';
import { widget } from '../widget';
import { anyProjectOrigin, corsOptionsFor } from './cors';
import { openApiRoute, registerOpenApi } from '../rest/openapi';
import { registerRestRoutes, type Route } from '../rest/router';
import { keyUseOf, type Authenticate, type RouteAuth } from './route-auth';
import { checkKeyUse } from '../auth/key-use';
import { projectOriginCheck } from '../rpc/browser-access';
import { authenticateRpc } from '../rpc/caller';
import { publicErrors } from '../rpc/public-errors';
import { requireDeclaredAuth } from './declared-auth';
import { answerErrorsInOneShape, maxBodyBytes, sendError } from './errors';
import { acceptJsonBodiesOnly } from './json-bodies';
import type { Handler } from './listeners';
import { observeRequests, requestIdOf } from './observe';

/** The largest Connect or gRPC message accepted; a larger one is refused from its declared length, unread. */
export const maxRpcMessageBytes = 1024 * 1024;

/** What both listeners serve, declared once. */
export interface EdgeDeclarations {
  routes: readonly Route[];
  rpc: { routes: (router: ConnectRouter) => void; authOf: ReadonlyMap<string, RouteAuth>; streamingPaths: ReadonlySet<string> };
}

/** How one listener makes its Node server from Fastify's request handler. */
export type ServerFactory = (handler: Handler) => Server | Http2Server;

/** Connect, gRPC and gRPC-web: each method's declared key is checked before its message is read (rpc/caller.ts). */
function connectPaths(deps: Deps, rpc: EdgeDeclarations['rpc'], authenticate: Authenticate) {
  const browserAccess = { policy: anyProjectOrigin(deps.tenancy, deps.config.corsOrigins), methods: connectCors.allowedMethods.join(', ') };
  const clientIpOf = clientIpContext(deps.config.trustedProxies);
  return async (scope: FastifyInstance) => {
    scope.addHook('onRoute', (r) => {
      r.config = { ...r.config, auth: 'rpc', browserAccess };
    });
    await scope.register(fastifyConnectPlugin, {
      routes: rpc.routes,
      readMaxBytes: maxRpcMessageBytes,
      requestGate: authenticateRpc(rpc.authOf, authenticate, deps.log),
      interceptors: [publicErrors(deps.log), projectOriginCheck({ corsOrigins: deps.config.corsOrigins, tenancy: deps.tenancy })],
      contextValues: (req) => clientIpOf(req.raw),
    });
  };
}

/**
 * One Fastify app of the gateway on the server `serverFactory` makes. build() makes two (HTTP/1.1 and h2c) from the
 * same declarations, since one Node server cannot speak both cleartext protocols.
 */
export async function createEdgeApp(deps: Deps, declared: EdgeDeclarations, listener: { http2: boolean; serverFactory: ServerFactory }): Promise<FastifyInstance> {
  const options = {
    http2: listener.http2,
    serverFactory: listener.serverFactory,
    bodyLimit: maxBodyBytes,
    genReqId: requestIdOf,
    exposeHeadRoutes: false,
    // Requests on open connections are still served while the gateway drains; server.ts cuts them after the grace.
    return503OnClosing: false,
    forceCloseConnections: false,
    routerOptions: { maxParamLength: 128 },
    // A path that is not valid percent-encoding, or a parameter over 128 characters: refused before any hook runs.
    frameworkErrors: (err: Error, req: FastifyRequest, reply: FastifyReply) => sendError(err, req, reply.header('x-request-id', req.id), deps.log),
  };
  const app = Fastify(options as unknown as FastifyServerOptions) as unknown as FastifyInstance;
  // The one place a route's key is decided: an admin route of a project also takes an operator key that covers it.
  // Then what the key may do: from where, and whether it may change anything (src/auth/key-use.ts).
  const authenticate: Authenticate = async (authorization, kind, projectId, use) => {
    const caller = await (kind === 'admin' && projectId !== undefined ? projectRouteCaller(deps.keys, deps.tenancy, authorization, projectId) : deps.keys.authenticate(authorization, kind));
    checkKeyUse(caller.restrictions, keyUseOf(use, deps.config.trustedProxies));
    return caller;
  };

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.decorateRequest('caller', undefined);
  app.decorateRequest('rawBody', undefined);
  requireDeclaredAuth(app);
  observeRequests(app, deps, declared.rpc.streamingPaths);
  answerErrorsInOneShape(app, deps.log);
  acceptJsonBodiesOnly(app);
  // The console's cookie becomes the request's credential before any route's own check reads it.
  app.addHook('onRequest', sessionCredential(consoleCookieOf(deps.config.publicUrl)));

  // @fastify/cors adds an OPTIONS catch-all that answers preflights of unknown paths with the 404 handler: no key involved.
  app.addHook('onRoute', (r) => {
    if (r.method === 'OPTIONS' && r.url === '*') r.config = { ...r.config, auth: 'none' };
  });
  await app.register(fastifyCors, { delegator: corsOptionsFor });
  await registerOpenApi(app);
  registerRestRoutes(app, [...declared.routes, openApiRoute(() => app.swagger())], authenticate, {
    operator: operatorTokenCheck(deps.config.temporal.codecToken, 'DOCENT_CODEC_TOKEN'),
    metrics: operatorTokenCheck(deps.config.metricsToken, 'DOCENT_METRICS_TOKEN'),
  });
  await app.register(connectPaths(deps, declared.rpc, authenticate));
  await app.register(playground(deps.config.playgroundDir));
  await app.register(widget(deps.config.widgetDir));
  await app.register(consolePages(deps.config.consoleDir));
  await app.register(ownDocs(deps.config.ownDocsDir));
  await app.register(favicon(deps.config.consoleDir));
  await app.ready();
  return app;
}
