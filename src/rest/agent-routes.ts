import { jobToJson } from '../agent/job';
import { createJobBody, idempotencyKey, listJobsQuery, sendMessageBody } from '../agent/validation';
import type { Deps } from '../deps';
import { parseInput } from '../validate';
import { projectOrigins } from './cors';
import { route, type Route } from './router';


/** REST paths of agent jobs (DESIGN.md "Public API"). */
export function agentRoutes(deps: Deps): Route[] {
  const jobs = deps.agentJobs;
  // The admin key is secret, so this only lets a page the operator trusts (the playground, a dashboard) use it.
  const cors = projectOrigins(deps.tenancy, deps.config.corsOrigins);
  return [
    route({
      method: 'POST',
      path: '/v2/agent/{projectId}/job',
      summary: 'Create an agent job (201, or 200 with the same job for a repeated Idempotency-Key)',
      auth: 'admin',
      cors,
      body: createJobBody,
      handler: async (req) => {
        const header = req.headers['idempotency-key'];
        const key = header === undefined ? undefined : parseInput(idempotencyKey, Array.isArray(header) ? header[0] : header);
        const projectId = req.params.projectId!;
        const { job, created, limitHeaders } = await jobs.createJob(req.headers.authorization, { projectId, idempotencyKey: key, ...req.body });
        return {
          status: created ? 201 : 200,
          body: jobToJson(job),
          headers: { location: `/v2/agent/${encodeURIComponent(projectId)}/job/${job._id}`, ...limitHeaders },
        };
      },
    }),
    route({
      method: 'GET',
      path: '/v2/agent/{projectId}/job/{jobId}',
      summary: 'Get an agent job',
      auth: 'admin',
      cors,
      handler: async (req) => {
        const job = await jobs.getJob(req.headers.authorization, { projectId: req.params.projectId!, jobId: req.params.jobId! });
        return { status: 200, body: jobToJson(job) };
      },
    }),
    route({
      method: 'GET',
      path: '/v2/agent/{projectId}/jobs',
      summary: 'List agent jobs, newest first (query: status, limit 1-100, cursor)',
      auth: 'admin',
      cors,
      handler: async (req) => {
        const query = parseInput(listJobsQuery, Object.fromEntries(req.query));
        const page = await jobs.listJobs(req.headers.authorization, { projectId: req.params.projectId!, ...query });
        return { status: 200, body: { jobs: page.jobs.map(jobToJson), nextCursor: page.nextCursor } };
      },
    }),
    route({
      method: 'POST',
      path: '/v2/agent/{projectId}/job/{jobId}/message',
      summary: 'Send a follow-up instruction: the agent continues on the same branch and pull request',
      auth: 'admin',
      cors,
      body: sendMessageBody,
      handler: async (req) => {
        const { job, limitHeaders } = await jobs.sendMessage(req.headers.authorization, { projectId: req.params.projectId!, jobId: req.params.jobId!, prompt: req.body.prompt });
        return { status: 200, body: jobToJson(job), headers: limitHeaders };
      },
    }),
    route({
      method: 'POST',
      path: '/v2/agent/{projectId}/job/{jobId}/archive',
      summary: 'Archive a job, cancelling it if it is still active',
      auth: 'admin',
      cors,
      handler: async (req) => {
        const job = await jobs.archiveJob(req.headers.authorization, { projectId: req.params.projectId!, jobId: req.params.jobId! });
        return { status: 200, body: jobToJson(job) };
      },
    }),
  ];
}
