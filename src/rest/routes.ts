import type { Deps } from '../deps';
import { consoleSessionRoutes } from '../console/session-routes';
import { checkReadiness } from '../health';
import { adminRoutes } from './admin-routes';
import { agentRoutes } from './agent-routes';
import { agentV1Routes } from './agent-v1-routes';
import { automationRoutes } from './automation-routes';
import { assistantRoutes } from './assistant-routes';
import { analyticsRoutes } from './analytics-routes';
import { gapsRoutes } from './gaps-routes';
import { githubRoutes } from './github-routes';
import { mcpRoutes } from './mcp-routes';
import { mintlifyDeployRoutes } from './mintlify-deploy-routes';
import { codecRoutes } from './codec-routes';
import { livenessBody, readinessBody } from './response-schemas';
import { route, type Route } from './router';
import { webhookRoutes } from './webhook-routes';

function healthRoutes(deps: Deps): Route[] {
  return [
    route({
      method: 'GET',
      path: '/healthz',
      summary: 'Liveness: the process answers',
      auth: 'none',
      responses: { 200: { description: 'Alive', json: livenessBody } },
      handler: async () => ({ status: 200, body: { status: 'ok' } }),
    }),
    route({
      method: 'GET',
      path: '/readyz',
      summary: 'Readiness: MongoDB, Elasticsearch and Temporal each answer within the deadline',
      auth: 'none',
      responses: { 200: { description: 'Ready', json: readinessBody }, 503: { description: 'Not ready: which dependency failed', json: readinessBody } },
      handler: async () => {
        const r = await checkReadiness({ db: deps.mongo.db, es: deps.es, temporal: deps.temporalConnection, timeoutMs: deps.config.dependencyTimeoutMs });
        return { status: r.ready ? 200 : 503, body: r };
      },
    }),
    route({
      method: 'GET',
      path: '/metrics',
      summary: 'Prometheus metrics: requests, latencies, streams, rate-limit refusals, agent jobs by status',
      // Every project's usage and cost: for the operator's scraper only (DOCENT_METRICS_TOKEN), never public.
      auth: 'metrics',
      responses: { 200: { description: 'Prometheus text format', streamed: 'text/plain' } },
      handler: async () => {
        const text = await deps.metrics.scrape();
        return {
          status: 200,
          headers: { 'content-type': deps.metrics.registry.contentType },
          stream: (async function* () {
            yield text;
          })(),
        };
      },
    }),
  ];
}

/** Every REST path of the public API, over the same services as the Connect handlers; one list per area. */
export function restRoutes(deps: Deps): Route[] {
  return [
    ...healthRoutes(deps),
    ...agentRoutes(deps),
    ...agentV1Routes(deps),
    ...automationRoutes(deps),
    ...webhookRoutes(deps),
    ...githubRoutes(deps),
    ...assistantRoutes(deps),
    ...mcpRoutes(deps),
    ...analyticsRoutes(deps),
    ...mintlifyDeployRoutes(deps),
    ...gapsRoutes(deps),
    ...codecRoutes(deps),
    ...adminRoutes(deps),
    ...consoleSessionRoutes(deps),
  ];
}
