import type { ServiceImpl } from '@connectrpc/connect';
import { jobToMessage, type JobStatus } from '../agent/job';
import { createJobBody, idempotencyKey, listJobsQuery, sendMessageBody } from '../agent/validation';
import type { Deps } from '../deps';
import { parseInput } from '../validate';
import { AgentJobStatus, type AgentService } from '../gen/agent/v2/agent_pb';


const statusFromProto: Partial<Record<AgentJobStatus, JobStatus>> = {
  [AgentJobStatus.ACTIVE]: 'active',
  [AgentJobStatus.COMPLETED]: 'completed',
  [AgentJobStatus.ARCHIVED]: 'archived',
  [AgentJobStatus.FAILED]: 'failed',
};

/** Connect handlers of agent.v2.AgentService over the same service as the REST routes. */
export function agentHandlers(deps: Deps): ServiceImpl<typeof AgentService> {
  const jobs = deps.agentJobs;
  const auth = (ctx: { requestHeader: Headers }) => ctx.requestHeader.get('authorization');
  return {
    async createAgentJob(req, ctx) {
      const body = parseInput(createJobBody, { prompt: req.prompt, branch: req.branch, model: req.model, asDraft: req.asDraft });
      const key = req.idempotencyKey ?? ctx.requestHeader.get('idempotency-key') ?? undefined;
      const { job, limitHeaders } = await jobs.createJob(auth(ctx), { projectId: req.projectId, idempotencyKey: key === undefined ? undefined : parseInput(idempotencyKey, key), ...body });
      for (const [k, v] of Object.entries(limitHeaders)) ctx.responseHeader.set(k, v);
      return { job: jobToMessage(job) };
    },
    async getAgentJob(req, ctx) {
      return { job: jobToMessage(await jobs.getJob(auth(ctx), { projectId: req.projectId, jobId: req.jobId })) };
    },
    async listAgentJobs(req, ctx) {
      const query = parseInput(listJobsQuery, { status: statusFromProto[req.status], limit: req.limit, cursor: req.cursor });
      const page = await jobs.listJobs(auth(ctx), { projectId: req.projectId, ...query });
      return { jobs: page.jobs.map(jobToMessage), nextCursor: page.nextCursor ?? undefined };
    },
    async sendAgentJobMessage(req, ctx) {
      const { prompt } = parseInput(sendMessageBody, { prompt: req.prompt });
      const { job, limitHeaders } = await jobs.sendMessage(auth(ctx), { projectId: req.projectId, jobId: req.jobId, prompt });
      for (const [k, v] of Object.entries(limitHeaders)) ctx.responseHeader.set(k, v);
      return { job: jobToMessage(job) };
    },
    async archiveAgentJob(req, ctx) {
      return { job: jobToMessage(await jobs.archiveJob(auth(ctx), { projectId: req.projectId, jobId: req.jobId })) };
    },
    async *watchAgentJob(req, ctx) {
      for await (const job of jobs.watchJob(auth(ctx), { projectId: req.projectId, jobId: req.jobId }, ctx.signal)) {
        yield { job: jobToMessage(job) };
      }
    },
  };
}
