import { jobToJson } from '../agent/job';
import type { Deps } from '../deps';
import { checkReadiness } from '../health';
import type { Route } from './router';

/** The plain REST paths of DESIGN.md, over the same services as the Connect handlers. */
export function restRoutes(deps: Deps): Route[] {
  return [
    { method: 'GET', path: '/healthz', handler: async () => ({ status: 200, body: { status: 'ok' } }) },
    {
      method: 'GET',
      path: '/readyz',
      handler: async () => {
        const r = await checkReadiness({ db: deps.mongo.db, es: deps.es, temporal: deps.temporalConnection, timeoutMs: deps.config.dependencyTimeoutMs });
        return { status: r.ready ? 200 : 503, body: r };
      },
    },
    {
      method: 'GET',
      path: '/v2/agent/{projectId}/job/{jobId}',
      handler: async (req) => {
        const job = await deps.agentJobs.getJob(req.headers.authorization, { projectId: req.params.projectId!, jobId: req.params.jobId! });
        return { status: 200, body: jobToJson(job) };
      },
    },
  ];
}
