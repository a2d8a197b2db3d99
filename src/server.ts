import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { Code, type ConnectRouter, type Interceptor } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { clientIpContext } from './limits/client-context';
import type { Deps } from './deps';
import { toConnectError } from './errors';
import { AgentService } from './gen/agent/v2/agent_pb';
import { createRestHandler } from './rest/router';
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
  return (next) => async (req) => {
    const toPublic = (err: unknown) => {
      const pub = toConnectError(err);
      if (pub !== err) deps.log[pub.code === Code.Internal ? 'error' : 'warn']({ err, rpc: req.url }, 'rpc failed');
      return pub;
    };
    try {
      const res = await next(req);
      if (!res.stream) return res;
      // A streaming handler throws while its messages are read, after this interceptor has returned.
      const messages = res.message;
      return {
        ...res,
        message: (async function* () {
          try {
            yield* messages;
          } catch (err) {
            throw toPublic(err);
          }
        })(),
      };
    } catch (err) {
      throw toPublic(err);
    }
  };
}

/** `restPaths` defaults to every REST path of DESIGN.md; tests may add routes of their own. */
export function build(deps: Deps, restPaths: Route[] = restRoutes(deps)): Gateway {
  const rest = createRestHandler(restPaths, deps.log);
  const connect = connectNodeAdapter({
    routes: routes(deps),
    interceptors: [publicErrors(deps)],
    contextValues: clientIpContext(deps.config.trustedProxies),
    fallback: rest,
  });
  // A client that never finishes sending its request gets 408 instead of holding a socket; streamed answers are unaffected.
  const requestTimeout = deps.config.requestTimeoutMs;
  const http1 = http.createServer(
    { requestTimeout, headersTimeout: Math.min(requestTimeout, 60_000), connectionsCheckingInterval: Math.min(30_000, Math.max(100, requestTimeout / 4)) },
    connect,
  );
  const h2 = http2.createServer(connect);
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
