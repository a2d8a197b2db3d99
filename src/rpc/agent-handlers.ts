import type { ServiceImpl } from '@connectrpc/connect';
import { timestampDate } from '@bufbuild/protobuf/wkt';
import { eventToMessage, jobToMessage, type JobStatus } from '../jobs/job';
import { createJobBody, diffQuery, idempotencyKey, maxInstructionMessageBytes, listJobsQuery, sendMessageBody } from '../agent/validation';
import { whileLeased } from '../auth/stream-leases';
import type { Deps } from '../deps';
import { parseInput } from '../validate';
import { AppError } from '../errors';
import { AgentJobStatus, type AgentJobImage, type AgentService } from '../gen/agent/v2/agent_pb';
import type { ImageInput } from '../agent/images';
import { callerOf, type MethodAuth } from './caller';

const statusFromProto: Partial<Record<AgentJobStatus, JobStatus>> = {
  [AgentJobStatus.ACTIVE]: 'active',
  [AgentJobStatus.COMPLETED]: 'completed',
  [AgentJobStatus.ARCHIVED]: 'archived',
  [AgentJobStatus.FAILED]: 'failed',
};

/** An AgentJobImage as the service takes it; one with neither bytes nor a URL is refused there as empty. */
function imageFromProto(image: AgentJobImage): ImageInput {
  if (image.source.case === 'url') return { url: image.source.value };
  return { mimeType: image.mimeType, data: image.source.case === 'data' ? image.source.value : new Uint8Array() };
}

/** Every agent.v2.AgentService method needs the project's admin key. */
export const agentMethodAuth: MethodAuth<typeof AgentService> = {
  createAgentJob: 'admin',
  getAgentJob: 'admin',
  listAgentJobs: 'admin',
  sendAgentJobMessage: 'admin',
  archiveAgentJob: 'admin',
  watchAgentJob: 'admin',
  stopAgentJob: 'admin',
  retryAgentJob: 'admin',
  listAgentModels: 'admin',
  getAgentJobDiff: 'admin',
  approveAgentJobPlan: 'admin',
};

/** The methods that take images read messages up to five of the largest images. */
export const agentMethodReadMaxBytes = { createAgentJob: maxInstructionMessageBytes, sendAgentJobMessage: maxInstructionMessageBytes };

/** Connect handlers of agent.v2.AgentService over the same service as the REST routes. */
export function agentHandlers(deps: Deps): ServiceImpl<typeof AgentService> {
  const jobs = deps.agentJobs;
  return {
    async createAgentJob(req, ctx) {
      const context = req.contextRepositories.length ? { contextRepositories: req.contextRepositories.map((c) => ({ repo: c.repo, ref: c.ref })) } : {};
      const fields = { prompt: req.prompt, branch: req.branch, model: req.model, asDraft: req.asDraft, requirePlanApproval: req.requirePlanApproval, ...context };
      const body = { ...parseInput(createJobBody, fields), images: req.images.map(imageFromProto) };
      const key = req.idempotencyKey ?? ctx.requestHeader.get('idempotency-key') ?? undefined;
      const { job, limitHeaders } = await jobs.createJob(callerOf(ctx), { projectId: req.projectId, idempotencyKey: key === undefined ? undefined : parseInput(idempotencyKey, key), ...body });
      for (const [k, v] of Object.entries(limitHeaders)) ctx.responseHeader.set(k, v);
      return { job: jobToMessage(job) };
    },
    async getAgentJob(req, ctx) {
      const job = await jobs.getJob(callerOf(ctx), { projectId: req.projectId, jobId: req.jobId });
      return { job: jobToMessage(job, await jobs.turnsOf(job)) };
    },
    async stopAgentJob(req, ctx) {
      return { job: jobToMessage(await jobs.stopJob(callerOf(ctx), { projectId: req.projectId, jobId: req.jobId })) };
    },
    async approveAgentJobPlan(req, ctx) {
      return { job: jobToMessage(await jobs.approvePlan(callerOf(ctx), { projectId: req.projectId, jobId: req.jobId, revision: req.revision })) };
    },
    async retryAgentJob(req, ctx) {
      return { job: jobToMessage(await jobs.retryJob(callerOf(ctx), { projectId: req.projectId, jobId: req.jobId })) };
    },
    async listAgentJobs(req, ctx) {
      const when = (t: typeof req.createdAfter) => (t ? timestampDate(t).toISOString() : undefined);
      const query = parseInput(listJobsQuery, {
        status: statusFromProto[req.status],
        limit: req.limit,
        cursor: req.cursor,
        origin: req.origin,
        automationId: req.automationId,
        instruction: req.instruction,
        createdAfter: when(req.createdAfter),
        createdBefore: when(req.createdBefore),
      });
      const page = await jobs.listJobs(callerOf(ctx), { projectId: req.projectId, ...query });
      return { jobs: page.jobs.map((j) => jobToMessage(j)), nextCursor: page.nextCursor ?? undefined };
    },
    async sendAgentJobMessage(req, ctx) {
      const { prompt } = parseInput(sendMessageBody, { prompt: req.prompt });
      const { job, limitHeaders } = await jobs.sendMessage(callerOf(ctx), { projectId: req.projectId, jobId: req.jobId, prompt, images: req.images.map(imageFromProto) });
      for (const [k, v] of Object.entries(limitHeaders)) ctx.responseHeader.set(k, v);
      return { job: jobToMessage(job) };
    },
    async listAgentModels(req, ctx) {
      const models = await jobs.listModels(callerOf(ctx), { projectId: req.projectId });
      return {
        models: models.map((m) => ({
          id: m.id,
          provider: m.provider,
          isDefault: m.default,
          images: m.images,
          prices: m.prices ?? undefined,
          imageLimits: m.imageLimits ? { ...m.imageLimits, mimeTypes: [...m.imageLimits.mimeTypes] } : undefined,
        })),
      };
    },
    async getAgentJobDiff(req, ctx) {
      const { turn } = parseInput(diffQuery, { turn: req.turn });
      return jobs.getDiff(callerOf(ctx), { projectId: req.projectId, jobId: req.jobId, turn });
    },
    async archiveAgentJob(req, ctx) {
      return { job: jobToMessage(await jobs.archiveJob(callerOf(ctx), { projectId: req.projectId, jobId: req.jobId })) };
    },
    async *watchAgentJob(req, ctx) {
      const caller = callerOf(ctx);
      // A watch holds one of the key's stream slots, and ends with 401 once the key is revoked.
      const lease = deps.streams.acquire(caller, ctx.signal);
      try {
        // Events only for clients that ask for them: older clients read every message's job.
        const wantsEvents = req.afterEventId !== undefined;
        const after = wantsEvents ? Number(req.afterEventId) : 0;
        if (!Number.isSafeInteger(after) || after < 0) throw new AppError('invalid_argument', 'after_event_id must be an event id');
        for await (const item of whileLeased(jobs.watchJob(caller, { projectId: req.projectId, jobId: req.jobId, after }, lease.signal), lease)) {
          if ('job' in item) yield { job: jobToMessage(item.job) };
          else if (wantsEvents) yield { event: eventToMessage(item.event) };
        }
      } finally {
        lease.release();
      }
    },
  };
}
