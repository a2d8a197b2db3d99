import { type JobDoc, jobToJson } from '../jobs/job';
import { restJobSource } from './job-source';
import { approvePlanBody, createJobBody, diffQuery, eventsQuery, idempotencyKey, maxInstructionBodyBytes, lastEventId, listJobsQuery, sendMessageBody } from '../agent/validation';
import { AppError } from '../errors';
import type { Deps } from '../deps';
import { parseInput } from '../validate';
import { projectOrigins } from '../edge/cors';
import { agentJobBody, agentJobPageBody, agentJobWithTurnsBody, agentModelsBody } from './response-schemas';
import { encodeJobEvents } from './job-event-stream';
import { route, type Route } from './router';

async function* toStream(text: string) {
  yield text;
}

const theJob = { 200: { description: 'The job', json: agentJobBody } };

/** REST paths of agent jobs (docs/agent-jobs.md). */
export function agentRoutes(deps: Deps): Route[] {
  const jobs = deps.agentJobs;
  const withSource = restJobSource(deps);
  const restJob = (job: JobDoc) => withSource(jobToJson(job));
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
      bodyLimit: maxInstructionBodyBytes,
      responses: { 201: { description: 'The new job', json: agentJobBody }, 200: { description: 'The job an earlier request with the same Idempotency-Key created', json: agentJobBody } },
      handler: async (req) => {
        const header = req.headers['idempotency-key'];
        const key = header === undefined ? undefined : parseInput(idempotencyKey, Array.isArray(header) ? header[0] : header);
        const projectId = req.params.projectId!;
        const { job, created, limitHeaders } = await jobs.createJob(req.caller, { projectId, idempotencyKey: key, ...req.body });
        return {
          status: created ? 201 : 200,
          body: await restJob(job),
          headers: { location: `/v2/agent/${encodeURIComponent(projectId)}/job/${job._id}`, ...limitHeaders },
        };
      },
    }),
    route({
      method: 'GET',
      path: '/v2/agent/{projectId}/job/{jobId}',
      summary: 'Get an agent job with its turns (what each instruction changed, used and cost)',
      auth: 'admin',
      cors,
      responses: { 200: { description: 'The job and its turns, oldest first', json: agentJobWithTurnsBody } },
      handler: async (req) => {
        const job = await jobs.getJobView(req.caller, { projectId: req.params.projectId!, jobId: req.params.jobId! });
        return { status: 200, body: await withSource(job) };
      },
    }),
    route({
      method: 'GET',
      path: '/v2/agent/{projectId}/job/{jobId}/events',
      summary: 'Server-sent events of a job: stored ones after Last-Event-ID (or ?after=), then live ones until it is no longer active',
      auth: 'admin',
      cors,
      responses: { 200: { description: 'text/event-stream: `id`, `event` (the type) and `data` (an AgentJobEvent) per event', streamed: 'text/event-stream' } },
      handler: async (req) => {
        const query = parseInput(eventsQuery, Object.fromEntries(req.query));
        const header = req.headers['last-event-id'];
        const resumeFrom = header === undefined ? undefined : parseInput(lastEventId, Array.isArray(header) ? header[0] : header);
        if (resumeFrom !== undefined && query.after !== undefined && resumeFrom !== query.after) throw new AppError('invalid_argument', 'Last-Event-ID and ?after= disagree; send one');
        const input = { projectId: req.params.projectId!, jobId: req.params.jobId!, after: resumeFrom ?? query.after ?? 0 };
        // A watch holds one of the key's stream slots, like WatchAgentJob.
        const lease = deps.streams.acquire(req.caller, req.signal);
        const events = jobs.jobEvents(req.caller, input, lease.signal);
        // The first read happens before the answer starts, so an unknown job is a 404, not an empty stream.
        const first = await events.next().catch((err: unknown) => {
          lease.release();
          throw err;
        });
        return {
          status: 200,
          headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
          stream: encodeJobEvents(first, events, lease),
        };
      },
    }),
    route({
      method: 'GET',
      path: '/v2/agent/{projectId}/job/{jobId}/diff',
      summary: 'The unified diff of the job branch against its base, or of one turn with ?turn=N (binary files marked, capped at 1 MiB)',
      auth: 'admin',
      cors,
      responses: { 200: { description: 'text/x-diff; empty when nothing was pushed. `X-Docent-Diff-Truncated: true` when cut (the text then ends with a note)', streamed: 'text/x-diff' } },
      handler: async (req) => {
        const { turn } = parseInput(diffQuery, Object.fromEntries(req.query));
        const { diff, truncated } = await jobs.getDiff(req.caller, { projectId: req.params.projectId!, jobId: req.params.jobId!, turn });
        return {
          status: 200,
          headers: { 'content-type': 'text/x-diff; charset=utf-8', 'x-docent-diff-truncated': String(truncated), 'cache-control': 'no-store' },
          stream: toStream(diff),
        };
      },
    }),
    route({
      method: 'POST',
      path: '/v2/agent/{projectId}/job/{jobId}/stop',
      summary: 'Stop the running turn: the job keeps its branch and pull request, its turn ends stopped, and it takes follow-ups',
      auth: 'admin',
      cors,
      responses: { 202: { description: 'The job; the turn stops within moments (watch its events)', json: agentJobBody } },
      handler: async (req) => {
        const job = await jobs.stopJob(req.caller, { projectId: req.params.projectId!, jobId: req.params.jobId! });
        return { status: 202, body: await restJob(job) };
      },
    }),
    route({
      method: 'POST',
      path: '/v2/agent/{projectId}/job/{jobId}/approve',
      summary:
        'Approve the plan revision the client read ({"revision": planRevision}) of a job created with requirePlanApproval: the agent then edits, following it (409 aborted when another revision came since; 400 failed_precondition when no plan awaits)',
      auth: 'admin',
      cors,
      body: approvePlanBody,
      responses: theJob,
      handler: async (req) => {
        const job = await jobs.approvePlan(req.caller, { projectId: req.params.projectId!, jobId: req.params.jobId!, revision: req.body?.revision });
        return { status: 200, body: await restJob(job) };
      },
    }),
    route({
      method: 'POST',
      path: '/v2/agent/{projectId}/job/{jobId}/retry',
      summary: 'Retry the failed or stopped last turn from its last durable step (a pushed turn only opens its pull request again)',
      auth: 'admin',
      cors,
      responses: theJob,
      handler: async (req) => {
        const job = await jobs.retryJob(req.caller, { projectId: req.params.projectId!, jobId: req.params.jobId! });
        return { status: 200, body: await restJob(job) };
      },
    }),
    route({
      method: 'GET',
      path: '/v2/agent/{projectId}/models',
      summary: "The models a create's `model` may name, the default first",
      auth: 'admin',
      cors,
      responses: { 200: { description: 'The model catalog (DOCENT_MODELS)', json: agentModelsBody } },
      handler: async (req) => ({ status: 200, body: { models: await jobs.listModels(req.caller, { projectId: req.params.projectId! }) } }),
    }),
    route({
      method: 'GET',
      path: '/v2/agent/{projectId}/jobs',
      summary: 'List agent jobs, newest first (query: status, origin, automationId, instruction, createdAfter, createdBefore, limit 1-100, cursor)',
      auth: 'admin',
      cors,
      responses: { 200: { description: 'A page of jobs and the cursor of the next page (null on the last)', json: agentJobPageBody } },
      handler: async (req) => {
        const query = parseInput(listJobsQuery, Object.fromEntries(req.query));
        const page = await jobs.listJobs(req.caller, { projectId: req.params.projectId!, ...query });
        return { status: 200, body: { jobs: await Promise.all(page.jobs.map(restJob)), nextCursor: page.nextCursor } };
      },
    }),
    route({
      method: 'POST',
      path: '/v2/agent/{projectId}/job/{jobId}/message',
      summary: 'Send a follow-up instruction: the agent continues on the same branch and pull request (while a plan awaits approval: feedback, and the agent writes another plan)',
      auth: 'admin',
      cors,
      body: sendMessageBody,
      bodyLimit: maxInstructionBodyBytes,
      responses: theJob,
      handler: async (req) => {
        const { job, limitHeaders } = await jobs.sendMessage(req.caller, { projectId: req.params.projectId!, jobId: req.params.jobId!, prompt: req.body.prompt, images: req.body.images });
        return { status: 200, body: await restJob(job), headers: limitHeaders };
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
        return { status: 200, body: await restJob(job) };
      },
    }),
  ];
}
