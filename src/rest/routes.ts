import type { Deps } from '../deps';
import { checkReadiness } from '../health';
import { agentRoutes } from './agent-routes';
import { openApiRoute } from './openapi';
import { assistantRoutes } from './assistant-routes';
import { route, type Route } from './router';

function healthRoutes(deps: Deps): Route[] {
  return [
    route({ method: 'GET', path: '/healthz', summary: 'Liveness: the process answers', auth: 'none', handler: async () => ({ status: 200, body: { status: 'ok' } }) }),
    route({
      method: 'GET',
      path: '/readyz',
      summary: 'Readiness: MongoDB, Elasticsearch and Temporal each answer within the deadline',
      auth: 'none',
      handler: async () => {
        const r = await checkReadiness({ db: deps.mongo.db, es: deps.es, temporal: deps.temporalConnection, timeoutMs: deps.config.dependencyTimeoutMs });
        return { status: r.ready ? 200 : 503, body: r };
      },
    }),
    route({
      method: 'GET',
      path: '/metrics',
      summary: 'Prometheus metrics: requests, latencies, streams, rate-limit refusals, agent jobs by status',
      auth: 'none',
      handler: async () => {
        const text = await deps.metrics.registry.metrics();
        return { status: 200, headers: { 'content-type': deps.metrics.registry.contentType }, stream: (async function* () { yield text; })() };
      },
    }),
  ];
}

/** Every REST path of DESIGN.md, over the same services as the Connect handlers; one list per area. */
export function restRoutes(deps: Deps): Route[] {
  const routes: Route[] = [...healthRoutes(deps), ...agentRoutes(deps), ...assistantRoutes(deps)];
  routes.push(openApiRoute(() => routes));
  return routes;
}
