import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../deps';
import { logContext } from '../log';
import { traced } from '../tracing';

// A caller's own request id is kept when it is a plain token, so one id follows a request through proxies.
const requestIdShape = /^[A-Za-z0-9._:-]{1,128}$/;

/** Fastify's `genReqId`: the caller's x-request-id when it is a plain token, else a new UUID. */
export function requestIdOf(req: IncomingMessage | Http2ServerRequest): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && requestIdShape.test(incoming) ? incoming : randomUUID();
}

/** The route template a request matched, as metrics and logs name it (never the raw path: ids vary). */
function routeLabel(req: FastifyRequest): string {
  if (req.is404 || !req.routeOptions.url) return 'unmatched';
  return req.routeOptions.url.replace(/:(\w+)/g, '{$1}');
}

/**
 * Every request: an x-request-id header, the id on every log line written while it runs, a span when tracing is on,
 * and, once the response closes (finished or cut), an access log line and metrics by route template.
 */
export function observeRequests(app: FastifyInstance, deps: Pick<Deps, 'log' | 'metrics' | 'tracer'>, streamingRpcPaths: ReadonlySet<string>): void {
  const { log, metrics, tracer } = deps;
  app.addHook('onRequest', (req, reply, done) => {
    const started = performance.now();
    const route = routeLabel(req);
    reply.header('x-request-id', req.id);
    const res = reply.raw;
    const closed = new Promise<void>((resolve) => res.once('close', resolve));
    void closed.then(() => {
      const seconds = (performance.now() - started) / 1000;
      const labels = { method: req.method, route, status: String(res.statusCode) };
      metrics.requests.inc(labels);
      metrics.requestSeconds.observe(labels, seconds);
      if (res.statusCode === 429) metrics.rateLimited.inc({ route });
      const streamed = streamingRpcPaths.has(route) || /event-stream/.test(String(res.getHeader('content-type'))) || res.hasHeader('x-vercel-ai-data-stream');
      if (streamed) metrics.streamSeconds.observe({ route }, seconds);
      // Method, route template and status only: headers, query strings and bodies may carry keys.
      logContext.run({ requestId: req.id }, () => log.info({ method: req.method, route, status: res.statusCode, ms: Math.round(seconds * 1000) }, 'request'));
    });
    // The rest of the request runs inside the log context (and the span), since `done` continues it from here.
    logContext.run({ requestId: req.id }, () => {
      if (!tracer) return done();
      void traced(tracer, `${req.method} ${route}`, { 'http.request.method': req.method, 'http.route': route, 'docent.request_id': req.id }, async () => {
        done();
        await closed;
      });
    });
  });
}
