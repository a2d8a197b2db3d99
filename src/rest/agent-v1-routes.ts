import { v1Branch, v1CreateJobBody, v1ListQuery, v1Model, v1Prompt } from '../agent/mintlify-v1';
import { idempotencyKey } from '../agent/validation';
import type { Deps } from '../deps';
import { projectOrigins } from '../edge/cors';
import { parseInput } from '../validate';
import { encodeJobEvents } from './job-event-stream';
import { v1SessionBody, v1SessionListBody } from './response-schemas';
import { route, type Route } from './router';

/** Mintlify's deprecated v1 agent API over docent's jobs (docs/api.md, "Mintlify compatibility"). */
export function agentV1Routes(deps: Deps): Route[] {
  const jobs = deps.agentJobs;
  const cors = projectOrigins(deps.tenancy, deps.config.corsOrigins);
  return [
    route({
      method: 'POST',
      path: '/v1/agent/{projectId}/job',
      summary:
        "Deprecated (Mintlify's v1): create an agent job from messages, answered with its events as server-sent events until it is no longer active; X-Session-Id is the job's id and X-Branch-Name the branch the agent works on",
      auth: 'admin',
      cors,
      body: v1CreateJobBody,
      responses: { 200: { description: 'text/event-stream: the job events of GET /v2/agent/{projectId}/job/{jobId}/events', streamed: 'text/event-stream' } },
      handler: async (req) => {
        const projectId = req.params.projectId!;
        const header = req.headers['idempotency-key'];
        const key = header === undefined ? undefined : parseInput(idempotencyKey, Array.isArray(header) ? header[0] : header);
        v1Branch(req.body.branch);
        const prompt = v1Prompt(req.body.messages);
        const model = v1Model(req.body.model, deps.config.models);
        // The stream's slot first: a job is never created for an answer that could not be streamed.
        const lease = deps.streams.acquire(req.caller, req.signal);
        try {
          const { job, limitHeaders } = await jobs.createJob(req.caller, {
            projectId,
            idempotencyKey: key,
            prompt,
            ...(req.body.asDraft !== undefined && { asDraft: req.body.asDraft }),
            ...(model && { model }),
          });
          const events = jobs.jobEvents(req.caller, { projectId, jobId: job._id, after: 0 }, lease.signal);
          const first = await events.next();
          return {
            status: 200,
            headers: {
              'content-type': 'text/event-stream; charset=utf-8',
              'cache-control': 'no-cache',
              'x-accel-buffering': 'no',
              'x-session-id': job._id,
              'x-branch-name': job.branch,
              location: `/v2/agent/${encodeURIComponent(projectId)}/job/${job._id}`,
              deprecation: 'true',
              ...limitHeaders,
            },
            stream: encodeJobEvents(first, events, lease),
          };
        } catch (err) {
          lease.release();
          throw err;
        }
      },
    }),
    route({
      method: 'GET',
      path: '/v1/agent/{projectId}/job/{id}',
      summary: "Deprecated (Mintlify's v1): a job as Mintlify's session: sessionId, branch, haulted, haultReason, pullRequestLink, todos (one per instruction), title",
      auth: 'admin',
      cors,
      responses: { 200: { description: 'The session', json: v1SessionBody } },
      handler: async (req) => ({ status: 200, headers: { deprecation: 'true' }, body: await jobs.getV1Session(req.caller, { projectId: req.params.projectId!, jobId: req.params.id! }) }),
    }),
    route({
      method: 'GET',
      path: '/v1/agent/{projectId}/jobs',
      summary: "Deprecated (Mintlify's v1): the project's jobs as sessions, newest first (query: skip from 0, take 1-100, default 12)",
      auth: 'admin',
      cors,
      responses: { 200: { description: 'The sessions', json: v1SessionListBody } },
      handler: async (req) => {
        const { skip, take } = parseInput(v1ListQuery, Object.fromEntries(req.query));
        return { status: 200, headers: { deprecation: 'true' }, body: { allSessions: await jobs.listV1Sessions(req.caller, { projectId: req.params.projectId!, skip, take }) } };
      },
    }),
  ];
}
