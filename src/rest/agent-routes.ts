import { jobToJson } from '../agent/job';
import type { Deps } from '../deps';
import { route, type Route } from './router';

/** REST paths of agent jobs (DESIGN.md "Public API"). */
export function agentRoutes(deps: Deps): Route[] {
  return [
    route({
      method: 'GET',
      path: '/v2/agent/{projectId}/job/{jobId}',
      summary: 'Get an agent job',
      auth: 'admin',
      handler: async (req) => {
        const job = await deps.agentJobs.getJob(req.headers.authorization, { projectId: req.params.projectId!, jobId: req.params.jobId! });
        return { status: 200, body: jobToJson(job) };
      },
    }),
  ];
}
