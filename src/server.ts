import { randomUUID } from 'node:crypto';
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { DescMethod, DescService } from '@bufbuild/protobuf';
import { Code, type ConnectRouter, type Interceptor } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { clientIpContext } from './limits/client-context';
import type { Deps } from './deps';
import { toConnectError } from './errors';
import { AgentService } from './gen/agent/v2/agent_pb';
import { logContext } from './log';
import { createPlaygroundHandler, isPlaygroundPath } from './playground';
import { createRestHandler, type NodeResponse } from './rest/router';
import { createConnectCors, projectOriginCheck } from './rpc/browser-access';
import { traced } from './tracing';
import type { Route } from './rest/router';
import { restRoutes } from './rest/routes';
import { agentHandlers } from './rpc/agent-handlers';
import { AssistantService as AssistantServiceV1 } from './gen/discovery/v1/assistant_pb';
import { SearchService } from './gen/discovery/v1/search_pb';
import { AssistantService as AssistantServiceV2 } from './gen/discovery/v2/assistant_pb';
import { assistantV1Handlers, assistantV2Handlers, searchHandlers } from './rpc/assistant-handlers';

export interface Gateway {
  /** HTTP/1.1: REST, SSE, Connect and gRPC-web. */
  http1: http.Server;
  /** Cleartext HTTP/2: gRPC, and Connect over HTTP/2. */
  http2: http2.Http2Server;
  listen(): Promise<{ httpPort: number; grpcPort: number }>;
  /** Stops accepting, lets requests in flight finish within the grace period, then cuts the rest. */
  close(): Promise<void>;
}

const services: DescService[] = [AgentService, AssistantServiceV2, AssistantServiceV1, SearchService];
const rpcPaths = new Map<string, DescMethod['methodKind']>(services.flatMap((s) => s.methods.map((m) => [`/${s.typeName}/${m.name}`, m.methodKind] as const)));

// A caller's own request id is kept when it is a plain token, so one id follows a request through proxies.
const requestIdShape = /^[A-Za-z0-9._:-]{1,128}$/;

function routes(deps: Deps) {
  return (router: ConnectRouter) => {
    router.service(AgentService, agentHandlers(deps));
    router.service(AssistantServiceV2, assistantV2Handlers(deps));
    router.service(AssistantServiceV1, assistantV1Handlers(deps));
    router.service(SearchService, searchHandlers(deps));
  };
}

/** Database and provider errors are logged here and reach Connect clients only as their public code. */
function publicErrors(deps: Deps): Interceptor {
  const toPublic = (err: unknown, rpc: string) => {
    const pub = toConnectError(err);
    if (pub !== err) deps.log[pub.code === Code.Internal ? 'error' : 'warn']({ err, rpc }, 'rpc failed');
    return pub;
  };
  return (next) => async (req) => {
    let res;
    try {
      res = await next(req);
    } catch (err) {
      throw toPublic(err, req.url);
    }
    if (!res.stream) return res;
    // A streaming handler fails while its messages are read (WatchAgentJob of an unknown job), not when called.
    const messages = res.message;
    return {
      ...res,
      message: (async function* () {
        try {
          yield* messages;
        } catch (err) {
          throw toPublic(err, req.url);
        }
      })(),
    };
  };
}

/** `restPaths` defaults to every REST path of DESIGN.md; tests may add routes of their own. */
export function build(deps: Deps, restPaths: Route[] = restRoutes(deps)): Gateway {
  const rest = createRestHandler(restPaths, deps.log);
  const browserAccess = { corsOrigins: deps.config.corsOrigins, tenancy: deps.tenancy };
  const connect = connectNodeAdapter({
    routes: routes(deps),
    interceptors: [publicErrors(deps), projectOriginCheck(browserAccess)],
    contextValues: clientIpContext(deps.config.trustedProxies),
    fallback: rest,
  });
  const connectCors = createConnectCors(browserAccess, (p) => rpcPaths.has(p));
  const playground = createPlaygroundHandler(deps.config.playgroundDir);
  const { metrics, tracer } = deps;

  /** Every request: a request id, an access log line and metrics by route template; then the playground, CORS, Connect or REST. */
  const handle = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => {
    const started = performance.now();
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && requestIdShape.test(incoming) ? incoming : randomUUID();
    res.setHeader('x-request-id', requestId);
    const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
    const route = isPlaygroundPath(pathname) ? '/playground' : rpcPaths.has(pathname) ? pathname : (rest.routeOf(pathname) ?? 'unmatched');
    const finished = new Promise<void>((resolve) => res.once('close', resolve));
    void finished.then(() => {
      const seconds = (performance.now() - started) / 1000;
      const labels = { method: req.method ?? '', route, status: String(res.statusCode) };
      metrics.requests.inc(labels);
      metrics.requestSeconds.observe(labels, seconds);
      if (res.statusCode === 429) metrics.rateLimited.inc({ route });
      const streamed = rpcPaths.get(pathname) === 'server_streaming' || /event-stream/.test(String(res.getHeader('content-type'))) || res.hasHeader('x-vercel-ai-data-stream');
      if (streamed) metrics.streamSeconds.observe({ route }, seconds);
      // Method, route template and status only: headers, query strings and bodies may carry keys.
      logContext.run({ requestId }, () => deps.log.info({ method: req.method, route, status: res.statusCode, ms: Math.round(seconds * 1000) }, 'request'));
    });
    logContext.run({ requestId }, () =>
      void traced(tracer, `${req.method} ${route}`, { 'http.request.method': req.method ?? '', 'http.route': route, 'docent.request_id': requestId }, async () => {
        if (isPlaygroundPath(pathname)) await playground(req, res);
        else if (!(await connectCors(req, res))) connect(req, res);
        await finished;
      }).catch((err: unknown) => {
        deps.log.error({ err }, 'request failed before routing');
        if (res.headersSent) return void res.destroy();
        const out: NodeResponse = res;
        out.writeHead(500, { 'content-type': 'application/json' });
        out.end(JSON.stringify({ error: 'internal error', code: 'internal' }));
      }),
    );
  };

  // A client that never finishes sending its request gets 408 instead of holding a socket; streamed answers are unaffected.
  const requestTimeout = deps.config.requestTimeoutMs;
  const http1 = http.createServer(
    { requestTimeout, headersTimeout: Math.min(requestTimeout, 60_000), connectionsCheckingInterval: Math.min(30_000, Math.max(100, requestTimeout / 4)) },
    handle,
  );
  const h2 = http2.createServer(handle);
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on('session', (s) => {
    sessions.add(s);
    s.once('close', () => sessions.delete(s));
  });

  const listenOn = (server: http.Server | http2.Http2Server, port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, deps.config.host, () => resolve((server.address() as AddressInfo).port));
    });

  return {
    http1,
    http2: h2,
    async listen() {
      const [httpPort, grpcPort] = await Promise.all([listenOn(http1, deps.config.httpPort), listenOn(h2, deps.config.grpcPort)]);
      return { httpPort, grpcPort };
    },
    async close() {
      const closed = Promise.all([
        new Promise<void>((r) => (http1.listening ? http1.close(() => r()) : r())),
        new Promise<void>((r) => (h2.listening ? h2.close(() => r()) : r())),
      ]);
      http1.closeIdleConnections();
      for (const s of sessions) s.close(); // GOAWAY: streams in flight finish, no new ones start
      const timer = setTimeout(() => {
        http1.closeAllConnections();
        for (const s of sessions) s.destroy();
      }, deps.config.shutdownGraceMs);
      await closed;
      clearTimeout(timer);
    },
  };
}
