import type { Client as TemporalClient } from '@temporalio/client';
import type { RepositoryGate } from '../forges/repository-gate';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Caller } from '../auth/api-keys';
import type { Config } from '../config';
import { AppError } from '../errors';
import { catalogEntry, publicModel } from '../llm/model-catalog';
import { checkImages, type ImageInput } from './images';
import { approvedRevision } from './plan-revision';
import type { Logger } from '../log';
import { projectChecks, type ProjectDoc, type TenancyStore } from '../tenancy/store';
import type { stopOrphanTurn } from '../../workflows/reconcile-jobs';
import { stopOrphanTurnWorkflowId } from '../../workflows/reconcile-jobs-contract';
import { agentJobWorkflowId, approvePlanUpdate, stopTurnSignal, type Instruction } from '../../workflows/agent-job-contract';
import { AGENT_TASK_QUEUE, taskQueueName } from '../../workflows/task-queues';
import { JobStarter, type JobQuota } from '../jobs/job-starter';
import { JobSteering } from '../jobs/job-steering';
import { followJob, followJobEvents } from './event-stream';
import { awaitsApproval, type GapSpec, type JobDoc, type JobStatus } from '../jobs/job';
import type { JobAdmission } from '../jobs/admission';
import type { JobEvent } from '../jobs/job-events';
import type { JobPage } from '../jobs/job-store';
import { jobWithTurns } from '../jobs/job-view';
import type { CreateJob, ListJobs } from './validation';
import { checkContextRepositories } from './context-repositories';
import { type V1Session, v1Session } from './mintlify-v1';

export type { JobQuota };

const idShape = /^[A-Za-z0-9_.-]{1,64}$/;
/** The longest a stop of a turn no workflow runs waits for Temporal to take it to the reconciler. */
const stopHandOffMs = 5_000;

export interface AgentJobServiceDeps {
  config: Config;
  log: Logger;
  /** Admission of jobs and turns, through the ledger (the only writer of jobs, turns and events); never a turn's record. */
  ledger: JobAdmission;
  tenancy: TenancyStore;
  temporal: TemporalClient;
  quota?: JobQuota;
  /** Decides through which connection each repository a job names is reached (src/forges/repository-gate.ts). */
  gate: RepositoryGate;
}

/** Agent job operations, shared by the REST routes and the Connect handlers. */
export class AgentJobService {
  /** Starts jobs: the same core an automation's run uses. */
  readonly starter: JobStarter;
  /** Moves existing jobs: messages, plan decisions, archives (src/jobs/job-steering.ts). */
  readonly steering: JobSteering;

  constructor(private readonly d: AgentJobServiceDeps) {
    this.starter = new JobStarter(d);
    this.steering = new JobSteering({ ...d, starter: this.starter });
  }

  /** Holds an authenticated caller to its own project; another project's key learns nothing about it. */
  private async authorize(caller: Caller, projectId: string) {
    if (caller.kind !== 'admin') throw new AppError('permission_denied', 'this endpoint needs an admin key');
    if (caller.projectId !== projectId || !idShape.test(projectId)) throw new AppError('not_found', 'project not found');
    const project = await this.d.tenancy.getProject(projectId);
    if (!project) throw new AppError('not_found', 'project not found');
    return project;
  }

  private async mustGet(projectId: string, jobId: string): Promise<JobDoc> {
    const job = idShape.test(jobId) ? await this.d.ledger.jobs.get(projectId, jobId) : null;
    if (!job) throw new AppError('not_found', 'job not found');
    return job;
  }

  async getJob(caller: Caller, input: { projectId: string; jobId: string }): Promise<JobDoc> {
    await this.authorize(caller, input.projectId);
    return this.mustGet(input.projectId, input.jobId);
  }

  /** The job with its turns, as GET shows it. */
  async getJobView(caller: Caller, input: { projectId: string; jobId: string }) {
    return jobWithTurns(await this.getJob(caller, input), this.d.ledger.turns);
  }

  /**
   * The unified diff of the job's branch against the commit it forked from, or of one turn, as the worker stored it
   * when it pushed (docs/decisions/2026-11-24-model-catalog-diff-images.md, "Diff"). Empty when nothing was pushed (yet).
   */
  async getDiff(caller: Caller, input: { projectId: string; jobId: string; turn?: number }): Promise<{ diff: string; truncated: boolean }> {
    const job = await this.getJob(caller, input);
    if (input.turn !== undefined && input.turn > job.turn) throw new AppError('not_found', `turn ${input.turn} not found: the job has ${job.turn}`);
    const pushed = (await this.d.ledger.turns.list(job._id, job)).filter((t) => t.commit && (input.turn === undefined || t.turn === input.turn));
    const latestPush = pushed.at(-1);
    if (!latestPush) return { diff: '', truncated: false };
    const stored = await this.d.ledger.diffs.get(job._id, input.turn);
    if (!stored || stored.turn !== latestPush.turn) throw new AppError('failed_precondition', `turn ${latestPush.turn} was pushed before docent stored diffs; see the branch ${job.branch}`);
    return input.turn === undefined ? { diff: stored.branchDiff, truncated: stored.branchTruncated } : { diff: stored.turnDiff, truncated: stored.turnTruncated };
  }

  /** The job's turns, oldest first. */
  turnsOf(job: JobDoc) {
    return this.d.ledger.turns.list(job._id, job);
  }

  async listJobs(caller: Caller, input: { projectId: string } & ListJobs): Promise<JobPage> {
    await this.authorize(caller, input.projectId);
    const { projectId: _, ...filters } = input;
    return this.d.ledger.jobs.list(input.projectId, filters);
  }

  /** A job as Mintlify's v1 session (src/agent/mintlify-v1.ts); its subdomain is the project's docs domain, else the project. */
  async getV1Session(caller: Caller, input: { projectId: string; jobId: string }): Promise<V1Session> {
    const project = await this.authorize(caller, input.projectId);
    const job = await this.mustGet(input.projectId, input.jobId);
    return v1Session(job, await this.turnsOf(job), project.domain ?? project._id);
  }

  /** Mintlify's v1 list: the project's jobs newest first, by offset. */
  async listV1Sessions(caller: Caller, input: { projectId: string; skip: number; take: number }): Promise<V1Session[]> {
    const project = await this.authorize(caller, input.projectId);
    const jobs = await this.d.ledger.jobs.listByOffset(input.projectId, input.skip, input.take);
    return Promise.all(jobs.map(async (job) => v1Session(job, await this.turnsOf(job), project.domain ?? project._id)));
  }

  /** The models jobs may choose, the default first, as GET /v2/agent/{projectId}/models lists them. */
  async listModels(caller: Caller, input: { projectId: string }) {
    await this.authorize(caller, input.projectId);
    return this.d.config.models.map((m, i) => publicModel(m, i === 0));
  }

  /** Records the job, then starts its workflow; a repeated Idempotency-Key returns the first job (created: false). */
  async createJob(caller: Caller, input: { projectId: string; idempotencyKey?: string; gap?: GapSpec } & CreateJob): Promise<{ job: JobDoc; created: boolean; limitHeaders: Record<string, string> }> {
    const project = await this.authorize(caller, input.projectId);
    const model = this.starter.chosenModel(input.projectId, input.model);
    const images = checkImages(input.images, model, `/v2/agent/${input.projectId}/models`);
    const contextRepositories = checkContextRepositories(input.contextRepositories, project.repository, this.d.config.github.gitUrl);
    const { idempotencyKey, images: _unchecked, contextRepositories: _raw, ...rest } = input;
    return this.starter.start(project, { ...rest, origin: 'api', images, contextRepositories, ...(idempotencyKey ? { idempotencyKey: `${input.projectId}:${idempotencyKey}` } : {}) });
  }

  /** Continues the job on the same branch and pull request: a signal to its workflow, which restarts if it had finished. */
  async sendMessage(caller: Caller, input: { projectId: string; jobId: string; prompt: string; images?: ImageInput[] }): Promise<{ job: JobDoc; limitHeaders: Record<string, string> }> {
    const project = await this.authorize(caller, input.projectId);
    const current = await this.mustGet(input.projectId, input.jobId);
    return this.continueJob(project, current, input.prompt, { images: input.images });
  }

  private async continueJob(project: ProjectDoc, current: JobDoc, prompt: string, { images: imageInput }: { images?: ImageInput[] }): Promise<{ job: JobDoc; limitHeaders: Record<string, string> }> {
    if (this.steering.messageKind(current) === 'plan feedback') return this.steering.revisePlan(current, prompt, (imageInput?.length ?? 0) > 0);
    // A model the operator has since taken out of the catalog takes no images here.
    const model = catalogEntry(this.d.config.models, current.model) ?? { name: current.model, provider: 'openai-compatible' as const, images: false };
    const images = checkImages(imageInput, model, `/v2/agent/${current.projectId}/models`);
    return this.starter.continueWith(project, current, prompt, { images });
  }

  /**
   * Approves the plan revision the client read: its workflow takes the approval (an update, so a plan nobody awaits,
   * or a revision it no longer awaits, is refused), then the job shows it. Another revision since is `aborted` (409).
   */
  async approvePlan(caller: Caller, input: { projectId: string; jobId: string; revision?: number }): Promise<JobDoc> {
    await this.authorize(caller, input.projectId);
    const job = await this.mustGet(input.projectId, input.jobId);
    if (!awaitsApproval(job)) throw new AppError('failed_precondition', `the job awaits no plan approval (${this.planState(job)})`);
    const read = approvedRevision(job.planRevision ?? 1, input.revision);
    // The workflow checks the revision again: it refuses one it no longer awaits (a revision asked meanwhile).
    // The workflow records the approval itself before it answers (one started before that change, in its plan loop).
    await this.steering.updatePlan(job, () => this.d.temporal.workflow.getHandle(agentJobWorkflowId(job._id)).executeUpdate(approvePlanUpdate, { args: [{ turn: job.turn, revision: read }] }));
    return (await this.d.ledger.jobs.get(job.projectId, job._id)) ?? job;
  }

  private planState(job: JobDoc): string {
    if (!job.requirePlanApproval) return 'it was not created with requirePlanApproval';
    if (job.status !== 'active') return `it is ${job.status}`;
    if (job.planStatus === 'approved') return 'its plan is approved';
    return 'the agent is writing its plan';
  }

  /** Stops the running turn: the job keeps its branch and pull request, and takes follow-ups and retries. */
  async stopJob(caller: Caller, input: { projectId: string; jobId: string }): Promise<JobDoc> {
    await this.authorize(caller, input.projectId);
    const job = await this.mustGet(input.projectId, input.jobId);
    if (job.status !== 'active') throw new AppError('failed_precondition', `the job is ${job.status}; only an active job can be stopped`);
    try {
      await this.d.temporal.workflow.getHandle(agentJobWorkflowId(job._id)).signal(stopTurnSignal, { turn: job.turn });
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      // Nobody is working on it: the reconciler ends the turn as the workflow would have (the gateway writes no turn).
      await this.starter
        .withinStartTimeout(
          () =>
            this.d.temporal.workflow.start<typeof stopOrphanTurn>('stopOrphanTurn', {
              workflowId: stopOrphanTurnWorkflowId(job._id, job.turn),
              taskQueue: taskQueueName(this.d.config.temporal.taskQueuePrefix, AGENT_TASK_QUEUE),
              args: [{ jobId: job._id, turn: job.turn }],
              workflowIdConflictPolicy: 'USE_EXISTING',
            }),
          // A stop answers 202 and is not waited on by a person typing: it may take longer than a create's start.
          Math.max(this.d.config.temporal.startTimeoutMs, stopHandOffMs),
        )
        .catch((startErr: unknown) => {
          this.d.log.error({ err: startErr, jobId: job._id }, 'could not hand the stopped turn to the reconciler');
          throw new AppError('unavailable', 'the stop could not be delivered; try again shortly');
        });
    }
    return job;
  }

  /**
   * Runs the job's failed (or stopped) last turn again. Steps that finished are not run again: a turn whose push
   * succeeded resumes at the pull request.
   */
  async retryJob(caller: Caller, input: { projectId: string; jobId: string }): Promise<JobDoc> {
    const project = await this.authorize(caller, input.projectId);
    const current = await this.mustGet(input.projectId, input.jobId);
    if (current.status !== 'failed') throw new AppError('failed_precondition', `the job is ${current.status}; only a failed or stopped turn can be retried`);
    const reopened = await this.d.ledger.reopenTurn(input.projectId, current._id, current.turn);
    if (reopened === 'no turn') throw new AppError('failed_precondition', 'this turn was recorded before retries existed; send a follow-up instead');
    if (reopened === 'turn changed') throw new AppError('failed_precondition', 'the turn is being retried already, or changed meanwhile; read the job again');
    if (reopened === 'job changed') throw new AppError('failed_precondition', 'the job changed meanwhile; read it again');
    const { job, turn } = reopened;
    const resume =
      turn.commit && turn.startCommit && turn.title !== undefined
        ? { resume: { startCommit: turn.startCommit, commit: turn.commit, title: turn.title, summary: turn.summary ?? turn.title, checks: turn.checks, checksPassed: turn.checksPassed } }
        : {};
    const instruction: Instruction = {
      prompt: turn.prompt,
      turn: turn.turn,
      history: await this.starter.historyBefore(job, turn.turn),
      checks: projectChecks(project),
      ...this.starter.capsOf(project),
      attempt: turn.attempt,
      ...(turn.images?.length ? { images: turn.images } : {}),
      ...resume,
      ...(turn.reply ? { reply: turn.reply } : {}),
      // A retried plan turn whose plan was approved edits with it; one whose plan was not plans again, numbering on.
      ...(turn.turn === 1 && job.planStatus === 'approved' && job.plan ? { approvedPlan: job.plan } : {}),
      ...(turn.turn === 1 && job.requirePlanApproval && job.planStatus !== 'approved' && job.planRevision ? { planRevisionBase: job.planRevision } : {}),
    };
    try {
      await this.starter.deliverInstruction(job, project, instruction);
    } catch (err) {
      this.d.log.error({ err, jobId: job._id }, 'could not deliver the retry');
      await this.d.ledger.failTurn(job, { code: 'unavailable', message: 'the retry could not be delivered; retry again' });
      throw new AppError('unavailable', 'the retry could not be delivered; try again shortly');
    }
    return job;
  }

  /** The job's events after `after`, then live ones until it is no longer active. */
  async *jobEvents(caller: Caller, input: { projectId: string; jobId: string; after: number }, signal: AbortSignal): AsyncGenerator<JobEvent> {
    await this.authorize(caller, input.projectId);
    await this.mustGet(input.projectId, input.jobId);
    yield* followJobEvents({ events: this.d.ledger.events, jobs: this.d.ledger.jobs }, input, input.after, signal);
  }

  /** Archives the job and cancels its workflow if it was working; archiving twice is harmless. */
  async archiveJob(caller: Caller, input: { projectId: string; jobId: string }): Promise<JobDoc> {
    await this.authorize(caller, input.projectId);
    if (!idShape.test(input.jobId)) throw new AppError('not_found', 'job not found');
    const job = await this.archive(input.projectId, input.jobId);
    if (!job) throw new AppError('not_found', 'job not found');
    return job;
  }

  private archive(projectId: string, jobId: string): Promise<JobDoc | null> {
    return this.steering.archive(projectId, jobId);
  }

  /** Yields the job now and after every change, and the job's events after `after`, until it is no longer active. */
  async *watchJob(caller: Caller, input: { projectId: string; jobId: string; after?: number }, signal: AbortSignal, pollMs = 300): AsyncGenerator<{ job: JobDoc } | { event: JobEvent }> {
    await this.authorize(caller, input.projectId);
    await this.mustGet(input.projectId, input.jobId);
    yield* followJob({ events: this.d.ledger.events, jobs: this.d.ledger.jobs }, input, input.after ?? 0, signal, pollMs);
  }
}

export type { JobStatus };
