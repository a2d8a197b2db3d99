// The one place a job starts, whoever asks: the gateway's create (src/agent/service.ts) and an automation's run, in
// the gateway (a manual trigger) or in the worker (a schedule's run, activities/automation-run.ts). It checks the
// model, counts the job against the project's limit, records it and starts its workflow.
import { randomBytes } from 'node:crypto';
import { anonymousForgeId } from '../forges/forge-connection';
import type { RepositoryGate } from '../forges/repository-gate';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { Client as TemporalClient } from '@temporalio/client';
import { isGrpcServiceError, ServiceError, WorkflowNotFoundError } from '@temporalio/client';
import type { Config } from '../config';
import { AppError } from '../errors';
import { missingModelSetting, noModelMessage } from '../llm/model';
import { catalogEntry } from '../llm/model-catalog';
import type { Logger } from '../log';
import { projectCaps, projectChecks, type ProjectDoc } from '../tenancy/store';
import type { agentJob } from '../../workflows/agent-job';
import { agentJobWorkflowId, followUpSignal, type AgentJobInput, type ContextRepository, type Instruction, type PullRequestReply } from '../../workflows/agent-job-contract';
import { AGENT_TASK_QUEUE, JOB_STATUS_SEARCH_ATTRIBUTE, PROJECT_SEARCH_ATTRIBUTE, taskQueueName } from '../../workflows/task-queues';
import type { JobAdmission } from './admission';
import { jobPriority } from './fairness';
import { JobStatusAttribute } from './job-status-attribute';
import type { GapSpec, JobDoc, JobIssue, JobOrigin } from './job';
import type { ImageMimeType } from './job-images';

const projectKey = defineSearchAttributeKey(PROJECT_SEARCH_ATTRIBUTE, SearchAttributeType.KEYWORD);
const statusKey = defineSearchAttributeKey(JOB_STATUS_SEARCH_ATTRIBUTE, SearchAttributeType.KEYWORD);
// How often a call is asked again while Temporal refuses connections (withinStartTimeout).
const startRetryMs = 250;
const grpcUnavailable = 14;

/** Counts an accepted create or follow-up against the project's hourly limit; throws resource_exhausted when spent. */
export interface JobQuota {
  consumeAgentJob(projectId: string): Promise<{ headers: Record<string, string>; release(): Promise<void> }>;
}

const unlimited = { headers: {}, release: async () => undefined };

export interface JobStarterDeps {
  config: Config;
  log: Logger;
  ledger: JobAdmission;
  temporal: TemporalClient;
  quota?: JobQuota;
  /** Whether the project's organization may still use the connection its repository resolved through (src/forges/); every door that starts jobs has it. */
  gate: RepositoryGate;
}

/** What a new job is: its instruction and options, and where it came from. Images are checked by the caller. */
export interface JobRequest {
  prompt: string;
  origin: JobOrigin;
  automationId?: string;
  model?: string;
  branch?: string;
  asDraft?: boolean;
  requirePlanApproval?: boolean;
  images?: Array<{ mimeType: ImageMimeType; data: Uint8Array } | { url: string }>;
  /** Already scoped to the project (`<projectId>:<key>`): a repeated start returns the first job. */
  idempotencyKey?: string;
  gap?: GapSpec;
  /** Read-only repositories beside the job's own, already checked (src/agent/context-repositories.ts). */
  contextRepositories?: ContextRepository[];
  issue?: JobIssue;
}

/** The Temporal UI's summary of a job's workflow: the prompt's first line and the project. */
export function workflowSummary(job: JobDoc, prompt: string): { staticSummary: string; staticDetails: string } {
  const firstLine = prompt.trim().split('\n')[0]!.slice(0, 120);
  return {
    staticSummary: `${job.projectId}: ${firstLine}`,
    staticDetails: `**Project** ${job.projectId}  \n**Repository** ${job.source.repository} at ${job.source.ref}  \n**Branch** ${job.branch}  \n**Instruction** ${firstLine}`,
  };
}

/** Temporal's frontend could not be reached (gRPC UNAVAILABLE), as opposed to a refusal of the call itself. */
function temporalUnreachable(err: unknown): boolean {
  const cause = err instanceof ServiceError ? err.cause : err;
  return isGrpcServiceError(cause) && cause.code === grpcUnavailable;
}

export class JobStarter {
  private readonly statusAttribute: JobStatusAttribute;

  constructor(private readonly d: JobStarterDeps) {
    this.statusAttribute = new JobStatusAttribute(d.temporal, d.config.temporal.namespace, d.log);
  }

  /** The per-project cap of jobs and follow-ups this starter counts against, if any. */
  get quota(): JobQuota | undefined {
    return this.d.quota;
  }

  /** The catalog entry a job names, or the default; a name outside the catalog is the caller's mistake. */
  chosenModel(projectId: string, name: string | undefined) {
    const missing = missingModelSetting(this.d.config.model);
    if (missing) throw new AppError('failed_precondition', noModelMessage(missing));
    const entry = name === undefined ? this.d.config.models[0] : catalogEntry(this.d.config.models, name);
    if (!entry) throw new AppError('invalid_argument', `model: ${name} is not one of this server's models (GET /v2/agent/${projectId}/models lists them)`);
    return entry;
  }

  /** Records the job, then starts its workflow; a repeated idempotency key returns the first job (created: false). */
  async start(project: ProjectDoc, input: JobRequest): Promise<{ job: JobDoc; created: boolean; limitHeaders: Record<string, string> }> {
    const model = this.chosenModel(project._id, input.model);
    if (input.idempotencyKey) {
      const existing = await this.d.ledger.jobs.findByIdempotencyKey(input.idempotencyKey);
      if (existing) {
        await this.startIfUnstarted(existing, project);
        return { job: existing, created: false, limitHeaders: {} };
      }
    }
    const forgeId = await this.forgeOf(project);
    const contextRepositories = await this.gatedContext(project, input.contextRepositories ?? []);
    const admission = (await this.d.quota?.consumeAgentJob(project._id)) ?? unlimited;
    const imageRefs = await this.d.ledger.storeImages(input.images ?? []).catch(async (err: unknown) => {
      await admission.release();
      throw err;
    });
    const withImages = imageRefs.length ? { images: imageRefs } : {};

    const id = `job_${randomBytes(12).toString('hex')}`;
    const now = new Date();
    const doc: JobDoc = {
      _id: id,
      projectId: project._id,
      status: 'active',
      source: { repository: project.repository, ref: input.branch ?? project.ref },
      model: model.name,
      branch: `${this.d.config.agent.branchPrefix}${id}`,
      prLink: null,
      createdAt: now,
      updatedAt: now,
      archivedAt: null,
      turn: 1,
      prompts: [{ turn: 1, prompt: input.prompt, at: now, ...withImages }],
      asDraft: input.asDraft ?? false,
      // One document and the start: on FerretDB every extra write queues behind the others (docs/decisions/2026-11-23-edge-on-fastify.md, "Cost").
      firstTurnImplied: true,
      origin: input.origin,
      ...(input.automationId ? { automationId: input.automationId } : {}),
      ...(input.idempotencyKey ? { idempotencyKey: input.idempotencyKey } : {}),
      ...(input.gap ? { gap: input.gap } : {}),
      ...(input.requirePlanApproval ? { requirePlanApproval: true } : {}),
      ...(contextRepositories.length ? { contextRepositories } : {}),
      ...(input.issue ? { issue: input.issue } : {}),
      ...(forgeId ? { forgeId } : {}),
    };
    const inserted = await this.d.ledger.create(doc);
    if (!inserted.created) {
      await admission.release(); // a racing retry with the same key: the first request counted
      await this.startIfUnstarted(inserted.job, project);
      return { ...inserted, limitHeaders: {} };
    }
    try {
      await this.startWorkflow(doc, project, { prompt: input.prompt, turn: 1, history: [], checks: projectChecks(project), ...this.capsOf(project), ...withImages });
    } catch (err) {
      // Nothing half-written: without a workflow the job would stay active forever.
      await Promise.all([this.d.ledger.discard(id), admission.release()]);
      // A start that timed out may have started it after all: end that workflow too (best effort; Temporal may be down).
      await this.withinStartTimeout(() => this.d.temporal.workflow.getHandle(agentJobWorkflowId(id)).terminate('the job could not be created')).catch(() => undefined);
      this.d.log.error({ err, jobId: id }, 'could not start the agent job workflow');
      throw new AppError('unavailable', 'the job could not be started; try again shortly', 5);
    }
    this.d.log.info({ jobId: id, projectId: project._id, origin: input.origin, workflowId: `agent-job-${id}` }, 'agent job created');
    return { ...inserted, limitHeaders: admission.headers };
  }

  /**
   * Starts the first turn of an active job that has no workflow: a starter that died between the insert and the start
   * left it so, and a retried start with the same idempotency key repairs it. The start joins a running workflow
   * (USE_EXISTING), so racing with the first request starts one workflow.
   */
  private async startIfUnstarted(job: JobDoc, project: ProjectDoc): Promise<void> {
    if (job.status !== 'active' || job.turn !== 1) return;
    try {
      await this.withinStartTimeout(() => this.d.temporal.workflow.getHandle(agentJobWorkflowId(job._id)).describe());
      return;
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw new AppError('unavailable', 'the job could not be checked; try again shortly', 5);
    }
    const first = job.prompts.find((p) => p.turn === 1);
    const prompt = first?.prompt ?? '';
    try {
      // Jobs created before the first turn was implied stored it themselves.
      if (!job.firstTurnImplied) await this.d.ledger.beginTurn(job, 1, prompt, job.createdAt);
      await this.startWorkflow(job, project, { prompt, turn: 1, history: [], checks: projectChecks(project), ...this.capsOf(project), ...(first?.images?.length ? { images: first.images } : {}) });
    } catch (err) {
      this.d.log.error({ err, jobId: job._id }, 'could not start the unstarted agent job');
      throw new AppError('unavailable', 'the job could not be started; try again shortly', 5);
    }
    this.d.log.warn({ jobId: job._id }, 'started an agent job that had no workflow');
  }

  /**
   * Continues the job on the same branch and pull request with the next turn: counted against the project's limit,
   * claimed, then signalled to its workflow (which restarts if it had finished). The caller has checked the job takes
   * an instruction now (not archived, no plan awaiting approval) and the images.
   */
  async continueWith(
    project: ProjectDoc,
    current: JobDoc,
    prompt: string,
    { images = [], reply }: { images?: NonNullable<JobRequest['images']>; reply?: PullRequestReply } = {},
  ): Promise<{ job: JobDoc; limitHeaders: Record<string, string> }> {
    const admission = (await this.d.quota?.consumeAgentJob(current.projectId)) ?? unlimited;
    const imageRefs = await this.d.ledger.storeImages(images).catch(async (err: unknown) => {
      await admission.release();
      throw err;
    });
    const extra = { ...(imageRefs.length ? { images: imageRefs } : {}), ...(reply ? { reply } : {}) };
    const job = await this.d.ledger.claimNextTurn(current.projectId, current._id, prompt, extra).catch(async (err: unknown) => {
      await admission.release();
      throw err;
    });
    if (!job) {
      await admission.release();
      throw new AppError('failed_precondition', 'the job is archived and takes no more instructions');
    }
    const instruction: Instruction = {
      prompt,
      turn: job.turn,
      history: await this.historyBefore(job, job.turn),
      checks: projectChecks(project),
      ...this.capsOf(project),
      ...(imageRefs.length ? { images: imageRefs } : {}),
      ...(reply ? { reply } : {}),
    };
    try {
      await this.d.ledger.beginTurn(job, job.turn, prompt, job.updatedAt);
      await this.deliverInstruction(job, project, instruction);
    } catch (err) {
      this.d.log.error({ err, jobId: job._id }, 'could not deliver the follow-up');
      await Promise.all([this.d.ledger.failTurn(job, { code: 'unavailable', message: 'the instruction could not be delivered; send it again' }), admission.release()]);
      throw new AppError('unavailable', 'the instruction could not be delivered; try again shortly');
    }
    return { job, limitHeaders: admission.headers };
  }

  /** The newest job an automation started, or null. */
  async latestJobOf(projectId: string, automationId: string): Promise<JobDoc | null> {
    return (await this.d.ledger.jobs.list(projectId, { automationId, limit: 1 })).jobs[0] ?? null;
  }

  /** The instructions before `turn`, oldest first: from the turn records (follow-ups no longer push to job.prompts). */
  async historyBefore(job: JobDoc, turn: number): Promise<string[]> {
    const byTurn = new Map(job.prompts.map((p) => [p.turn, p.prompt]));
    for (const t of await this.d.ledger.turns.list(job._id, job)) byTurn.set(t.turn, t.prompt);
    return [...byTurn]
      .filter(([n]) => n < turn)
      .sort(([a], [b]) => a - b)
      .map(([, p]) => p);
  }

  /** A signal to the job's workflow, which restarts if it had finished (with the project's weight as it is then). */
  async deliverInstruction(job: JobDoc, project: ProjectDoc, instruction: Instruction): Promise<void> {
    const withStatus = await this.withStatusAttribute();
    await this.withinStartTimeout(() =>
      this.d.temporal.workflow.signalWithStart<typeof agentJob, [Instruction]>('agentJob', {
        ...this.startOptions(job, project, withStatus),
        ...workflowSummary(job, instruction.prompt),
        args: [{ ...this.workflowInput(job), ...withStatus }],
        signal: followUpSignal,
        signalArgs: [instruction],
      }),
    );
  }

  capsOf(project: ProjectDoc): Pick<Instruction, 'caps'> {
    const caps = projectCaps(project);
    return Object.keys(caps).length ? { caps } : {};
  }

  workflowInput(job: JobDoc, first?: Instruction): AgentJobInput {
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
      cloneWaitMs: this.d.config.agent.cloneWaitMs,
      maxSteps: this.d.config.agent.maxSteps,
      ...(job.gap ? { gapCheck: { domain: job.gap.domain, docsPath: job.gap.docsPath, baseUrl: job.gap.baseUrl, questions: job.gap.questions } } : {}),
      ...(job.requirePlanApproval ? { requirePlanApproval: true } : {}),
      ...(job.contextRepositories?.length ? { contextRepositories: job.contextRepositories } : {}),
      ...(job.forgeId ? { forgeId: job.forgeId } : {}),
    };
  }

  /** Each context repository with the connection of the project's organization that may read it (an API call's or an automation's); none may: 403. */
  private async gatedContext(project: ProjectDoc, repos: ContextRepository[]): Promise<ContextRepository[]> {
    const { gate } = this.d;
    return Promise.all(
      repos.map(async (r, i) => {
        const { forgeId } = await gate.resolve(project.orgId, r.repo, 'read').catch((err: unknown) => {
          throw err instanceof AppError ? new AppError(err.code, `contextRepositories[${i}].repo: ${err.message}`) : err;
        });
        return { ...r, forgeId };
      }),
    );
  }

  /** The connection a new job of the project uses: refused (403) when its organization may no longer use it. */
  private async forgeOf(project: ProjectDoc): Promise<string | undefined> {
    if (project.forgeId === anonymousForgeId) return project.forgeId;
    return (await this.d.gate.connectionOf(project.orgId, project.forgeId)).id;
  }

  /** `{ jobStatusAttribute: true }` when the namespace has DocentJobStatus, else nothing (jobs then run without it). */
  private async withStatusAttribute(): Promise<Pick<AgentJobInput, 'jobStatusAttribute'>> {
    return (await this.withinStartTimeout(() => this.statusAttribute.available())) ? { jobStatusAttribute: true } : {};
  }

  startOptions(job: JobDoc, project: ProjectDoc, { jobStatusAttribute }: Pick<AgentJobInput, 'jobStatusAttribute'> = {}) {
    return {
      workflowId: agentJobWorkflowId(job._id),
      taskQueue: taskQueueName(this.d.config.temporal.taskQueuePrefix, AGENT_TASK_QUEUE),
      typedSearchAttributes: [{ key: projectKey, value: job.projectId }, ...(jobStatusAttribute ? [{ key: statusKey, value: 'active' }] : [])],
      // One project's backlog does not hold another's jobs back: the queues dispatch projects in turn (src/jobs/fairness.ts).
      priority: jobPriority(project),
    };
  }

  /**
   * Runs a Temporal call for at most the start timeout: with Temporal down the client's own retries would go on for
   * about 20 s, longer than a client or proxy waits for an answer it must act on (retry, or not). Once its connection
   * is refused the client gives up within a second or so, so an unreachable Temporal is asked again until the start
   * timeout, as the client itself asks again: a Temporal that restarts within the timeout takes the call.
   */
  async withinStartTimeout<T>(call: () => Promise<T>, timeoutMs = this.d.config.temporal.startTimeoutMs): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        return await this.d.temporal.withDeadline(deadline, call);
      } catch (err) {
        if (!temporalUnreachable(err) || Date.now() + startRetryMs >= deadline) throw err;
        await new Promise((r) => setTimeout(r, startRetryMs));
      }
    }
  }

  private async startWorkflow(job: JobDoc, project: ProjectDoc, first: Instruction): Promise<void> {
    const withStatus = await this.withStatusAttribute();
    await this.withinStartTimeout(() =>
      this.d.temporal.workflow.start<typeof agentJob>('agentJob', {
        ...this.startOptions(job, project, withStatus),
        ...workflowSummary(job, first.prompt),
        args: [{ ...this.workflowInput(job, first), ...withStatus }],
        // A repeated start (a retried request) joins the running workflow instead of failing or starting another.
        workflowIdConflictPolicy: 'USE_EXISTING',
      }),
    );
  }
}
