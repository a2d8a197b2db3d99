import type http from 'node:http';
import type http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Deps } from './deps';
import { createEdgeApp, type EdgeDeclarations } from './edge/app';
import { createH2cServer, createHttp1Server, type H2cConnections, type ListenerLimits } from './edge/listeners';
import type { Route } from './rest/router';
import { restRoutes } from './rest/routes';
import { connectRoutes, rpcServices, type RpcService } from './rpc/services';

export interface Gateway {
  /** HTTP/1.1: REST, SSE, Connect and gRPC-web. */
  http1: http.Server;
  /** Cleartext HTTP/2: gRPC, and Connect over HTTP/2. */
  http2: http2.Http2Server;
  listen(): Promise<{ httpPort: number; grpcPort: number }>;
  /** Stops accepting, lets requests in flight finish within the grace period, then cuts the rest. */
  close(): Promise<void>;
}

/**
 * Builds both listeners from one set of declarations. Rejects when a route or RPC method declares no authentication.
 * `restPaths` defaults to every REST path of the public API and `services` to every Connect service; tests add their own.
 */
export async function build(deps: Deps, restPaths: Route[] = restRoutes(deps), services: RpcService[] = rpcServices(deps)): Promise<Gateway> {
  const rpc = connectRoutes(services);
  const streamingPaths = new Set(services.flatMap((s) => s.service.methods.filter((m) => m.methodKind !== 'unary').map((m) => `/${s.service.typeName}/${m.name}`)));
  const declared: EdgeDeclarations = { routes: restPaths, rpc: { ...rpc, streamingPaths } };
  const limits: ListenerLimits = { requestTimeoutMs: deps.config.requestTimeoutMs, h2IdleTimeoutMs: deps.config.edge.h2IdleTimeoutMs };

  let h2c: H2cConnections | undefined;
  const [app1, app2] = await Promise.all([
    createEdgeApp(deps, declared, { http2: false, serverFactory: (handler) => createHttp1Server(handler, limits) }),
    createEdgeApp(deps, declared, {
      http2: true,
      serverFactory: (handler) => {
        const created = createH2cServer(handler, limits);
        h2c = created.connections;
        return created.server;
      },
    }),
  ]);
  const http1 = app1.server as http.Server;
  const h2 = app2.server as unknown as http2.Http2Server;

  const listenOn = async (app: FastifyInstance, port: number) => {
    await app.listen({ port, host: deps.config.host });
    return (app.server.address() as AddressInfo).port;
  };

  return {
    http1,
    http2: h2,
    async listen() {
      const [httpPort, grpcPort] = await Promise.all([listenOn(app1, deps.config.httpPort), listenOn(app2, deps.config.grpcPort)]);
      return { httpPort, grpcPort };
    },
    async close() {
      const closed = Promise.all([app1.close(), app2.close()]);
      http1.closeIdleConnections();
      h2c?.drain();
      const timer = setTimeout(() => {
        http1.closeAllConnections();
        h2c?.cut();
      }, deps.config.shutdownGraceMs);
      await closed;
      clearTimeout(timer);
    },
  };
}
