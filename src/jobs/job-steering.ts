import { type Client as TemporalClient, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { Config } from '../config';
import { AppError } from '../errors';
import type { Logger } from '../log';
import type { ProjectDoc, TenancyStore } from '../tenancy/store';
import { agentJobWorkflowId, revisePlanUpdate, type PlanDecision, type PullRequestReply } from '../../workflows/agent-job-contract';
import type { ArchivedBy, JobAdmission } from './admission';
import { awaitsApproval, writesPlan, type JobDoc } from './job';
import type { JobStarter } from './job-starter';

/** The longest an approve or a revising message waits for a worker to take it (a crashed worker's sticky queue lasts 10 s). */
const planDecisionWaitMs = 30_000;
const unlimited = { headers: {}, release: async () => undefined };

export interface JobSteeringDeps {
  config: Config;
  log: Logger;
  ledger: JobAdmission;
  tenancy: TenancyStore;
  temporal: TemporalClient;
  starter: JobStarter;
}

/**
 * What moves an existing job: a message (a next turn, or feedback on the plan it awaits), a plan decision and an
 * archive. Shared by the gateway's API (src/agent/service.ts) and the worker's handling of forge deliveries
 * (src/github/delivery-handler.ts), so a comment on a pull request moves a job exactly as a message does.
 */
export class JobSteering {
  constructor(private readonly d: JobSteeringDeps) {}

  /** Why the job takes no message now, or whether the message is feedback on its plan. */
  messageKind(current: JobDoc): 'turn' | 'plan feedback' {
    if (current.status === 'archived') throw new AppError('failed_precondition', 'the job is archived and takes no more instructions');
    // While a plan awaits approval, a message is feedback on it: the agent writes another plan.
    if (awaitsApproval(current)) return 'plan feedback';
    if (writesPlan(current)) throw new AppError('failed_precondition', 'the agent is writing its plan; send your message once the plan is ready (the plan.ready event)');
    return 'turn';
  }

  /** Feedback on the plan the job awaits approval of: its workflow records it and writes another plan. */
  async revisePlan(job: JobDoc, feedback: string, withImages: boolean): Promise<{ job: JobDoc; limitHeaders: Record<string, string> }> {
    if (withImages) throw new AppError('invalid_argument', 'images: a message that revises a plan takes text only');
    const admission = (await this.d.starter.quota?.consumeAgentJob(job.projectId)) ?? unlimited;
    try {
      // The workflow records the request for another plan, with the feedback, before it answers.
      await this.updatePlan(job, () => this.d.temporal.workflow.getHandle(agentJobWorkflowId(job._id)).executeUpdate(revisePlanUpdate, { args: [{ turn: job.turn, feedback }] }));
    } catch (err) {
      await admission.release();
      throw err;
    }
    return { job: (await this.d.ledger.jobs.get(job.projectId, job._id)) ?? job, limitHeaders: admission.headers };
  }

  /**
   * Sends a plan decision to the workflow; one it refuses (no plan awaits there) is the caller's failed_precondition.
   * An update is answered by a worker: after a worker crash Temporal hands the workflow to another one only once the
   * crashed worker's sticky queue times out (10 s), so the wait is longer than a start's (docs/decisions/2026-11-24-plan-approval.md).
   */
  async updatePlan(job: JobDoc, send: () => Promise<PlanDecision>): Promise<PlanDecision> {
    try {
      return await this.d.temporal.withDeadline(Date.now() + Math.max(this.d.config.temporal.startTimeoutMs, planDecisionWaitMs), send);
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError || err instanceof WorkflowNotFoundError) throw new AppError('failed_precondition', 'the job awaits no plan approval; read it again');
      this.d.log.error({ err, jobId: job._id }, 'could not send the plan decision');
      throw new AppError('unavailable', 'the decision could not be delivered; read the job and try again shortly');
    }
  }

  /**
   * A follow-up from a comment on the job's pull request or issue (src/github/delivery-handler.ts): the same turn as a
   * message, counted against the same limit, whose end is answered on the pull request.
   */
  async continueFromPullRequest(job: JobDoc, prompt: string, reply: PullRequestReply): Promise<JobDoc> {
    const project: ProjectDoc | null = await this.d.tenancy.getProject(job.projectId);
    if (!project) throw new AppError('not_found', 'project not found');
    if (this.messageKind(job) === 'plan feedback') return (await this.revisePlan(job, prompt, false)).job;
    return (await this.d.starter.continueWith(project, job, prompt, { reply })).job;
  }

  /** Archives the job of a pull request that was closed or merged on the forge, as an admin's archive would. */
  archiveForClosedPullRequest(job: JobDoc, merged: boolean): Promise<JobDoc | null> {
    return this.archive(job.projectId, job._id, merged ? 'pull_request_merged' : 'pull_request_closed');
  }

  /** Archives the job and cancels its workflow if it was working; archiving twice is harmless. */
  archive(projectId: string, jobId: string, by?: ArchivedBy): Promise<JobDoc | null> {
    return this.d.ledger.archive(
      projectId,
      jobId,
      () =>
        this.d.temporal.workflow
          .getHandle(agentJobWorkflowId(jobId))
          .cancel()
          .catch((err: unknown) => {
            if (!(err instanceof WorkflowNotFoundError)) this.d.log.warn({ err, jobId }, 'could not cancel the archived job');
          }),
      by,
    );
  }
}
