import type { ServiceImpl } from '@connectrpc/connect';
import { jobToMessage, type JobStatus } from '../agent/job';
import { createJobBody, idempotencyKey, listJobsQuery, sendMessageBody } from '../agent/validation';
import { whileLeased } from '../auth/stream-leases';
import type { Deps } from '../deps';
import { parseInput } from '../validate';
import { AgentJobStatus, type AgentService } from '../gen/agent/v2/agent_pb';
import { callerOf, type MethodAuth } from './caller';

const statusFromProto: Partial<Record<AgentJobStatus, JobStatus>> = {
  [AgentJobStatus.ACTIVE]: 'active',
  [AgentJobStatus.COMPLETED]: 'completed',
  [AgentJobStatus.ARCHIVED]: 'archived',
  [AgentJobStatus.FAILED]: 'failed',
};

/** Every agent.v2.AgentService method needs the project's admin key. */
export const agentMethodAuth: MethodAuth<typeof AgentService> = {
  createAgentJob: 'admin',
  getAgentJob: 'admin',
  listAgentJobs: 'admin',
  sendAgentJobMessage: 'admin',
  archiveAgentJob: 'admin',
  watchAgentJob: 'admin',
};

/** Connect handlers of agent.v2.AgentService over the same service as the REST routes. */
export function agentHandlers(deps: Deps): ServiceImpl<typeof AgentService> {
  const jobs = deps.agentJobs;
  return {
    async createAgentJob(req, ctx) {
      const body = parseInput(createJobBody, { prompt: req.prompt, branch: req.branch, model: req.model, asDraft: req.asDraft });
      const key = req.idempotencyKey ?? ctx.requestHeader.get('idempotency-key') ?? undefined;
      const { job, limitHeaders } = await jobs.createJob(callerOf(ctx), { projectId: req.projectId, idempotencyKey: key === undefined ? undefined : parseInput(idempotencyKey, key), ...body });
      for (const [k, v] of Object.entries(limitHeaders)) ctx.responseHeader.set(k, v);
      return { job: jobToMessage(job) };
    },
    async getAgentJob(req, ctx) {
      return { job: jobToMessage(await jobs.getJob(callerOf(ctx), { projectId: req.projectId, jobId: req.jobId })) };
    },
    async listAgentJobs(req, ctx) {
      const query = parseInput(listJobsQuery, { status: statusFromProto[req.status], limit: req.limit, cursor: req.cursor });
      const page = await jobs.listJobs(callerOf(ctx), { projectId: req.projectId, ...query });
      return { jobs: page.jobs.map(jobToMessage), nextCursor: page.nextCursor ?? undefined };
    },
    async sendAgentJobMessage(req, ctx) {
      const { prompt } = parseInput(sendMessageBody, { prompt: req.prompt });
      const { job, limitHeaders } = await jobs.sendMessage(callerOf(ctx), { projectId: req.projectId, jobId: req.jobId, prompt });
      for (const [k, v] of Object.entries(limitHeaders)) ctx.responseHeader.set(k, v);
      return { job: jobToMessage(job) };
    },
    async archiveAgentJob(req, ctx) {
      return { job: jobToMessage(await jobs.archiveJob(callerOf(ctx), { projectId: req.projectId, jobId: req.jobId })) };
    },
    async *watchAgentJob(req, ctx) {
      const caller = callerOf(ctx);
      // A watch holds one of the key's stream slots, and ends with 401 once the key is revoked.
      const lease = deps.streams.acquire(caller, ctx.signal);
      try {
        for await (const job of whileLeased(jobs.watchJob(caller, { projectId: req.projectId, jobId: req.jobId }, lease.signal), lease)) {
          yield { job: jobToMessage(job) };
        }
      } finally {
        lease.release();
      }
    },
  };
}
