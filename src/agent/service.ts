import { randomBytes } from 'node:crypto';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { Client as TemporalClient } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Caller } from '../auth/api-keys';
import type { Config } from '../config';
import { AppError } from '../errors';
import { missingModelSetting } from '../llm/model';
import type { Logger } from '../log';
import { projectChecks, type TenancyStore } from '../tenancy/store';
import type { agentJob } from '../../workflows/agent-job';
import { AGENT_TASK_QUEUE, agentJobWorkflowId, followUpSignal, PROJECT_SEARCH_ATTRIBUTE, taskQueueName, type AgentJobInput, type Instruction } from '../../workflows/contracts';
import type { GapSpec, JobDoc, JobStatus } from './job';
import type { JobPage, JobStore } from './job-store';
import type { CreateJob, ListJobs } from './validation';

const idShape = /^[A-Za-z0-9_.-]{1,64}$/;
const projectKey = defineSearchAttributeKey(PROJECT_SEARCH_ATTRIBUTE, SearchAttributeType.KEYWORD);

/** Counts an accepted create or follow-up against the project's hourly limit; throws resource_exhausted when spent. */
export interface JobQuota {
  consumeAgentJob(projectId: string): Promise<{ headers: Record<string, string>; release(): Promise<void> }>;
}

const unlimited = { headers: {}, release: async () => undefined };

export interface AgentJobServiceDeps {
  config: Config;
  log: Logger;
  jobs: JobStore;
  tenancy: TenancyStore;
  temporal: TemporalClient;
  quota?: JobQuota;
}

/** Agent job operations, shared by the REST routes and the Connect handlers. */
export class AgentJobService {
  constructor(private readonly d: AgentJobServiceDeps) {}

  /** Holds an authenticated caller to its own project; another project's key learns nothing about it. */
  private async authorize(caller: Caller, projectId: string) {
    if (caller.kind !== 'admin') throw new AppError('permission_denied', 'this endpoint needs an admin key');
    if (caller.projectId !== projectId || !idShape.test(projectId)) throw new AppError('not_found', 'project not found');
    const project = await this.d.tenancy.getProject(projectId);
    if (!project) throw new AppError('not_found', 'project not found');
    return project;
  }

  private async mustGet(projectId: string, jobId: string): Promise<JobDoc> {
    const job = idShape.test(jobId) ? await this.d.jobs.get(projectId, jobId) : null;
    if (!job) throw new AppError('not_found', 'job not found');
    return job;
  }

  async getJob(caller: Caller, input: { projectId: string; jobId: string }): Promise<JobDoc> {
    await this.authorize(caller, input.projectId);
    return this.mustGet(input.projectId, input.jobId);
  }

  async listJobs(caller: Caller, input: { projectId: string } & ListJobs): Promise<JobPage> {
    await this.authorize(caller, input.projectId);
    return this.d.jobs.list(input.projectId, { status: input.status, limit: input.limit, cursor: input.cursor });
  }

  /** Records the job, then starts its workflow; a repeated Idempotency-Key returns the first job (created: false). */
  async createJob(caller: Caller, input: { projectId: string; idempotencyKey?: string; gap?: GapSpec } & CreateJob): Promise<{ job: JobDoc; created: boolean; limitHeaders: Record<string, string> }> {
    const project = await this.authorize(caller, input.projectId);
    const missing = missingModelSetting(this.d.config.model);
    if (missing) throw new AppError('failed_precondition', `no model is configured: set ${missing} to run agent jobs`);
    const idempotencyKey = input.idempotencyKey ? `${input.projectId}:${input.idempotencyKey}` : undefined;
    if (idempotencyKey) {
      const existing = await this.d.jobs.findByIdempotencyKey(idempotencyKey);
      if (existing) return { job: existing, created: false, limitHeaders: {} };
    }
    const admission = (await this.d.quota?.consumeAgentJob(input.projectId)) ?? unlimited;

    const id = `job_${randomBytes(12).toString('hex')}`;
    const now = new Date();
    const doc: JobDoc = {
      _id: id,
      projectId: input.projectId,
      status: 'active',
      source: { repository: project.repository, ref: input.branch ?? project.ref },
      model: input.model ?? this.d.config.model.id!,
      branch: `${this.d.config.agent.branchPrefix}${id}`,
      prLink: null,
      createdAt: now,
      updatedAt: now,
      archivedAt: null,
      turn: 1,
      prompts: [{ turn: 1, prompt: input.prompt, at: now }],
      asDraft: input.asDraft ?? false,
      ...(idempotencyKey ? { idempotencyKey } : {}),
      ...(input.gap ? { gap: input.gap } : {}),
    };
    const inserted = await this.d.jobs.insert(doc);
    if (!inserted.created) {
      await admission.release(); // a racing retry with the same key: the first request counted
      return { ...inserted, limitHeaders: {} };
    }
    try {
      await this.startWorkflow(doc, { prompt: input.prompt, turn: 1, history: [], checks: projectChecks(project) });
    } catch (err) {
      // Nothing half-written: without a workflow the job would stay active forever.
      await Promise.all([this.d.jobs.remove(id), admission.release()]);
      this.d.log.error({ err, jobId: id }, 'could not start the agent job workflow');
      throw new AppError('unavailable', 'the job could not be started; try again shortly');
    }
    this.d.log.info({ jobId: id, projectId: input.projectId, workflowId: `agent-job-${id}` }, 'agent job created');
    return { ...inserted, limitHeaders: admission.headers };
  }

  private workflowInput(job: JobDoc, first?: Instruction): AgentJobInput {
    return {
      jobId: job._id,
      projectId: job.projectId,
      repository: job.source.repository,
      baseRef: job.source.ref,
      branch: job.branch,
      model: job.model,
      asDraft: job.asDraft,
      first,
      heartbeatTimeoutMs: this.d.config.agent.heartbeatTimeoutMs,
      maxSteps: this.d.config.agent.maxSteps,
      ...(job.gap ? { gapCheck: { domain: job.gap.domain, docsPath: job.gap.docsPath, baseUrl: job.gap.baseUrl, questions: job.gap.questions } } : {}),
    };
  }

  private startOptions(job: JobDoc) {
    return {
      workflowId: agentJobWorkflowId(job._id),
      taskQueue: taskQueueName(this.d.config.temporal.taskQueuePrefix, AGENT_TASK_QUEUE),
      typedSearchAttributes: [{ key: projectKey, value: job.projectId }],
    };
  }

  private async startWorkflow(job: JobDoc, first: Instruction): Promise<void> {
    await this.d.temporal.workflow.start<typeof agentJob>('agentJob', {
      ...this.startOptions(job),
      args: [this.workflowInput(job, first)],
      // A repeated start (a retried request) joins the running workflow instead of failing or starting another.
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
  }

  /** Continues the job on the same branch and pull request: a signal to its workflow, which restarts if it had finished. */
  async sendMessage(caller: Caller, input: { projectId: string; jobId: string; prompt: string }): Promise<{ job: JobDoc; limitHeaders: Record<string, string> }> {
    const project = await this.authorize(caller, input.projectId);
    const current = await this.mustGet(input.projectId, input.jobId);
    if (current.status === 'archived') throw new AppError('failed_precondition', 'the job is archived and takes no more instructions');
    const admission = (await this.d.quota?.consumeAgentJob(input.projectId)) ?? unlimited;
    const job = await this.d.jobs.beginTurn(input.projectId, input.jobId, input.prompt).catch(async (err: unknown) => {
      await admission.release();
      throw err;
    });
    if (!job) {
      await admission.release();
      throw new AppError('failed_precondition', 'the job is archived and takes no more instructions');
    }
    const instruction: Instruction = {
      prompt: input.prompt,
      turn: job.turn,
      history: job.prompts.filter((p) => p.turn < job.turn).map((p) => p.prompt),
      checks: projectChecks(project),
    };
    try {
      await this.d.temporal.workflow.signalWithStart<typeof agentJob, [Instruction]>('agentJob', {
        ...this.startOptions(job),
        args: [this.workflowInput(job)],
        signal: followUpSignal,
        signalArgs: [instruction],
      });
    } catch (err) {
      this.d.log.error({ err, jobId: job._id }, 'could not deliver the follow-up');
      await Promise.all([this.d.jobs.failTurn(job._id, job.turn, { code: 'unavailable', message: 'the instruction could not be delivered; send it again' }), admission.release()]);
      throw new AppError('unavailable', 'the instruction could not be delivered; try again shortly');
    }
    return { job, limitHeaders: admission.headers };
  }

  /** Archives the job and cancels its workflow if it was working; archiving twice is harmless. */
  async archiveJob(caller: Caller, input: { projectId: string; jobId: string }): Promise<JobDoc> {
    await this.authorize(caller, input.projectId);
    if (!idShape.test(input.jobId)) throw new AppError('not_found', 'job not found');
    const r = await this.d.jobs.archive(input.projectId, input.jobId);
    if (!r) throw new AppError('not_found', 'job not found');
    if (r.wasActive) {
      await this.d.temporal.workflow
        .getHandle(agentJobWorkflowId(input.jobId))
        .cancel()
        .catch((err: unknown) => {
          if (!(err instanceof WorkflowNotFoundError)) this.d.log.warn({ err, jobId: input.jobId }, 'could not cancel the archived job');
        });
    }
    return r.job;
  }

  /** Yields the job now and after every change until it is no longer active (MongoDB here has no change streams: it polls). */
  async *watchJob(caller: Caller, input: { projectId: string; jobId: string }, signal: AbortSignal, pollMs = 300): AsyncGenerator<JobDoc> {
    await this.authorize(caller, input.projectId);
    let last = '';
    while (!signal.aborted) {
      const job = await this.mustGet(input.projectId, input.jobId);
      const version = `${job.status}|${job.updatedAt.getTime()}|${job.turn}`;
      if (version !== last) {
        last = version;
        yield job;
      }
      if (job.status !== 'active') return;
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }
}

export type { JobStatus };
