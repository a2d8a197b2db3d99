import { jobToJson } from '../agent/job';
import { createJobBody, idempotencyKey, listJobsQuery, sendMessageBody } from '../agent/validation';
import type { Deps } from '../deps';
import { parseInput } from '../validate';
import { projectOrigins } from './cors';
import { agentJobBody, agentJobPageBody } from './response-schemas';
import { route, type Route } from './router';

const theJob = { 200: { description: 'The job', json: agentJobBody } };

/** REST paths of agent jobs (README "Agent jobs"). */
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
      responses: { 201: { description: 'The new job', json: agentJobBody }, 200: { description: 'The job an earlier request with the same Idempotency-Key created', json: agentJobBody } },
      handler: async (req) => {
        const header = req.headers['idempotency-key'];
        const key = header === undefined ? undefined : parseInput(idempotencyKey, Array.isArray(header) ? header[0] : header);
        const projectId = req.params.projectId!;
        const { job, created, limitHeaders } = await jobs.createJob(req.caller, { projectId, idempotencyKey: key, ...req.body });
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
      responses: theJob,
      handler: async (req) => {
        const job = await jobs.getJob(req.caller, { projectId: req.params.projectId!, jobId: req.params.jobId! });
        return { status: 200, body: jobToJson(job) };
      },
    }),
    route({
      method: 'GET',
      path: '/v2/agent/{projectId}/jobs',
      summary: 'List agent jobs, newest first (query: status, limit 1-100, cursor)',
      auth: 'admin',
      cors,
      responses: { 200: { description: 'A page of jobs and the cursor of the next page (null on the last)', json: agentJobPageBody } },
      handler: async (req) => {
        const query = parseInput(listJobsQuery, Object.fromEntries(req.query));
        const page = await jobs.listJobs(req.caller, { projectId: req.params.projectId!, ...query });
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
      responses: theJob,
      handler: async (req) => {
        const { job, limitHeaders } = await jobs.sendMessage(req.caller, { projectId: req.params.projectId!, jobId: req.params.jobId!, prompt: req.body.prompt });
        return { status: 200, body: jobToJson(job), headers: limitHeaders };
      },
    }),
    route({
      method: 'POST',
      path: '/v2/agent/{projectId}/job/{jobId}/archive',
      summary: 'Archive a job, cancelling it if it is still active',
      auth: 'admin',
      cors,
      responses: theJob,
      handler: async (req) => {
        const job = await jobs.archiveJob(req.caller, { projectId: req.params.projectId!, jobId: req.params.jobId! });
        return { status: 200, body: jobToJson(job) };
      },
    }),
  ];
}
