/**
 * The job ledger: the only writer of a job's state, for the gateway and the worker alike.
 *
 * A job's state has four parts, and every change to it goes through a verb here so they stay in line:
 * - the job document (`jobs`): what lists and GET read; a cache of the facts below, settled after every write
 *   (src/jobs/job-state.ts), since on FerretDB only unique-key inserts are atomic;
 * - its turns (`job_turns`, one record per instruction, claimed by insert): the status, usage and durable steps;
 * - its events (`job_events`, ids 1, 2, … per job, each stored once per key from ./event-keys): the stream clients follow;
 * - the implied first turn (src/jobs/first-turn.ts): a create writes the job document only, and turn 1's record and
 *   its two opening events read as derived from it until the first write to them stores them. Kept because the
 *   create benchmark (bench/job-create-latency.ts) measures the create as one insert: on FerretDB each extra write
 *   queues behind the others (docs/decisions/2026-11-23-job-transparency.md, docs/decisions/2026-11-23-production-topology.md).
 *
 * Ending a turn is always in the same order: the turn, then the job, then the events, then the webhooks. Each step
 * is idempotent (a finished turn does not move again, the job moves only from active at this turn, events are keyed,
 * webhook messages have ids derived from the turn), so running the verb again completes what a crash interrupted.
 * A new transition is a new verb here that reuses these steps.
 */
import type { Db } from 'mongodb';
import type { Logger } from '../log';
import { notifyWebhooks, type Notifier } from '../webhooks/notify';
import type { JobDoc } from './job';
import { JobDiffStore, type TurnDiff } from './job-diffs';
import { JobEventStore, turnOpening } from './job-events';
import { JobImageStore, type ImageMimeType, type ImageRef } from './job-images';
import { JobStore } from './job-store';
import { TurnStore, type FileStat, type NextTurnExtras, type ProjectInstructionsRecord, type TurnDoc, type TurnUsage } from './job-turns';
import { jobWithTurns } from './job-view';
import type { RecordJobStatusInput } from '../../workflows/agent-job-contract';
import type { GapCheckResult } from '../../workflows/docs-gap-check-contract';
import { eventKeys } from './event-keys';

export interface LedgerDeps {
  /** Sends the turn's and the archive's webhooks; undefined where there is no Temporal client (no webhooks then). */
  notifier?: Notifier;
  log?: Logger;
}

/** How a turn ended (the worker's RecordJobStatusInput without its ids): the job reads `status`, the turn `turnStatus` when it differs. */
export type TurnOutcome = Omit<RecordJobStatusInput, 'jobId' | 'turn'>;

/** What archived a job besides an admin's request, as its `archived` status event says. */
export type ArchivedBy = 'pull_request_merged' | 'pull_request_closed';

/** What a stopped turn says, wherever it was stopped (the workflow's stop handler says the same). */
export const stoppedError = { code: 'stopped', message: 'the turn was stopped; send a follow-up or retry it to continue' };

export class JobLedger {
  private readonly jobStore: JobStore;
  private readonly turnStore: TurnStore;
  private readonly eventStore: JobEventStore;
  private readonly diffStore: JobDiffStore;
  private readonly imageStore: JobImageStore;
  private readonly background = new Set<Promise<void>>();

  constructor(
    db: Db,
    private readonly d: LedgerDeps = {},
  ) {
    this.jobStore = new JobStore(db);
    this.turnStore = new TurnStore(db);
    this.eventStore = new JobEventStore(db);
    this.diffStore = new JobDiffStore(db);
    this.imageStore = new JobImageStore(db);
  }

  /** Reads of jobs: by id, by idempotency key, a project's page. */
  get jobs(): Pick<JobStore, 'get' | 'byId' | 'findByIdempotencyKey' | 'list' | 'listByOffset' | 'staleActive'> {
    return this.jobStore;
  }

  /** Reads of turns, an implied turn 1 included. */
  get turns(): Pick<TurnStore, 'get' | 'list' | 'jobCostUsd'> {
    return this.turnStore;
  }

  /** Reads of the diffs pushes stored. */
  get diffs(): Pick<JobDiffStore, 'get'> {
    return this.diffStore;
  }

  /** Reads of the images instructions brought. */
  get images(): Pick<JobImageStore, 'get'> {
    return this.imageStore;
  }

  /** Stores an instruction's images before it is accepted, so the worker finds them by reference. */
  async storeImages(images: Array<{ mimeType: ImageMimeType; data: Uint8Array } | { url: string }>): Promise<ImageRef[]> {
    const refs: ImageRef[] = [];
    for (const image of images) refs.push('url' in image ? { url: image.url } : await this.imageStore.put(image.mimeType, image.data));
    return refs;
  }

  /** Reads of events, an implied opening included. */
  get events(): Pick<JobEventStore, 'after'> {
    return this.eventStore;
  }

  /** Records a new job (its first turn implied); with an idempotency key already used, returns that job (created: false). */
  create(doc: JobDoc): Promise<{ job: JobDoc; created: boolean }> {
    return this.jobStore.insert(doc);
  }

  /** Removes a job whose workflow could not be started, so nothing is left half-written. */
  discard(jobId: string): Promise<unknown> {
    return this.jobStore.remove(jobId);
  }

  /** Accepts a follow-up as the job's next turn (`reply`: the pull request its comment came from); null when the job is missing or archived. */
  claimNextTurn(projectId: string, jobId: string, prompt: string, extra: NextTurnExtras = {}): Promise<JobDoc | null> {
    return this.jobStore.beginTurn(projectId, jobId, prompt, extra);
  }

  /** Begins a turn: its record and its opening events, so the stream shows it from the moment it is accepted. */
  async beginTurn(job: Pick<JobDoc, '_id' | 'projectId' | 'model'>, turn: number, prompt: string, at: Date): Promise<void> {
    const events = turnOpening(turn, prompt);
    // A job's first turn has no events yet: both go in one insert, beside the turn's own record.
    await Promise.all([
      this.turnStore.begin({ jobId: job._id, projectId: job.projectId, model: job.model, turn, prompt, at }),
      turn === 1 ? this.eventStore.appendFirst(job._id, events) : events.reduce((p, e) => p.then(() => this.eventStore.append(job._id, e)), Promise.resolve(0)),
    ]);
  }

  /**
   * Reopens a failed or stopped turn for a retry: the turn first (of two racing retries one wins), then the job, then
   * the attempt's opening events. Says why not when the turn has no record (stored before retries existed), or when
   * the turn or the job changed meanwhile (the turn then ends as it was).
   */
  async reopenTurn(projectId: string, jobId: string, turn: number): Promise<{ job: JobDoc; turn: TurnDoc } | 'no turn' | 'turn changed' | 'job changed'> {
    const before = await this.turnStore.get(jobId, turn);
    if (!before) return 'no turn';
    const reopened = await this.turnStore.reopen(jobId, turn);
    if (!reopened) return 'turn changed';
    let job = await this.jobStore.reactivate(projectId, jobId, turn);
    if (!job) {
      await this.turnStore.finish(jobId, turn, { status: before.status, ...(before.error ? { error: before.error } : {}) });
      return 'job changed';
    }
    // A plan the turn waited on when it ended is not awaited any more: the retry writes another.
    if (job.planStatus === 'awaiting' && (await this.jobStore.setPlan(jobId, turn, { planStatus: 'awaiting' }, { planStatus: 'revising' }))) job = { ...job, planStatus: 'revising' };
    for (const e of turnOpening(turn, reopened.prompt, reopened.attempt)) await this.eventStore.append(jobId, e);
    return { job, turn: reopened };
  }

  /**
   * Ends a turn: the turn, then the job, then the events, then the webhooks. Only an active job at this very turn
   * moves, so a late or repeated call never moves a job backwards; a repeated call that finds the job already where
   * this outcome put it finishes the events and webhooks. `recorded` is true when this call moved the job.
   * A caller that nobody runs again logs a webhook it cannot start instead of failing (`logged`), or, answering a
   * request, starts them in the background (`background`: the Temporal client's own retries, about 20 s, go on).
   */
  async finishTurn(jobId: string, turn: number, outcome: TurnOutcome, opts: { webhooks?: 'await' | 'logged' | 'background' } = {}): Promise<{ recorded: boolean }> {
    const turnStatus = outcome.turnStatus ?? outcome.status;
    const before = await this.jobStore.byId(jobId);
    // Read now: a retry accepted right after the job moves must not lend this turn its attempt number.
    const attempt = (await this.turnStore.get(jobId, turn))?.attempt ?? 1;
    // The turn ends first, so a client that sees the job end (and retries it) finds the turn ended too.
    if (before?.turn === turn && before.status === 'active') {
      await this.turnStore.finish(jobId, turn, {
        status: turnStatus,
        prLink: outcome.prLink ?? null,
        ...(outcome.error ? { error: outcome.error } : {}),
        ...(outcome.checks !== undefined ? { checks: outcome.checks } : {}),
      });
    }
    const set: Partial<JobDoc> = { status: outcome.status, updatedAt: new Date() };
    if (outcome.prLink !== undefined) set.prLink = outcome.prLink;
    if (outcome.error) set.error = outcome.error;
    if (outcome.checks !== undefined) Object.assign(set, { checks: outcome.checks, checksPassed: outcome.checksPassed ?? null });
    const moved = await this.jobStore.finishTurn(jobId, turn, set);
    const job = await this.jobStore.byId(jobId);
    const ours = job !== null && job.status !== 'archived' && (moved || (job.turn === turn && job.status === outcome.status));
    if (moved) this.d.log?.info({ jobId, turn, status: outcome.status, errorCode: outcome.error?.code, prLink: outcome.prLink }, 'agent job turn finished');
    if (!ours || !job) return { recorded: false };

    const usage = (await this.turnStore.get(jobId, turn))?.usage ?? null;
    const error = outcome.error ? { error: outcome.error } : {};
    if (outcome.prLink) await this.eventStore.append(jobId, { key: eventKeys.pullRequest(turn, attempt), type: 'pull_request', turn, data: { url: outcome.prLink } });
    await this.eventStore.append(jobId, { key: eventKeys.turnFinished(turn, attempt), type: 'turn.finished', turn, data: { status: turnStatus, usage, prLink: outcome.prLink ?? null, ...error } });
    await this.eventStore.append(jobId, { key: eventKeys.status(turn, outcome.status, attempt), type: 'status', turn, data: { status: outcome.status, prLink: job.prLink, ...error } });
    const send = () => this.sendTurnWebhooks(job, turn, attempt, outcome.status);
    if (opts.webhooks === 'background') this.inBackground(send, { jobId, turn });
    else if (opts.webhooks === 'logged') await send().catch((err: unknown) => this.d.log?.warn({ err, jobId, turn }, 'could not send the turn webhooks'));
    else await send();
    return { recorded: moved };
  }

  /** Runs a webhook start after the caller has moved on; close() waits for it. */
  private inBackground(send: () => Promise<void>, at: { jobId: string; turn: number }): void {
    const running: Promise<void> = send()
      .catch((err: unknown) => this.d.log?.warn({ err, ...at }, 'could not send the turn webhooks'))
      .finally(() => this.background.delete(running));
    this.background.add(running);
  }

  /** Waits for the webhook starts still running in the background: call before the Temporal connection closes. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.background]);
  }

  private async sendTurnWebhooks(job: JobDoc, turn: number, attempt: number, status: TurnOutcome['status']): Promise<void> {
    if (!this.d.notifier) return;
    const view = await jobWithTurns(job, this.turnStore);
    const message = `msg_${job._id}_${turn}_${attempt}`;
    await notifyWebhooks(this.d.notifier, { messageId: `${message}_turn`, projectId: job.projectId, type: 'agent_job.turn_finished', job: view });
    const type = status === 'completed' ? 'agent_job.completed' : 'agent_job.failed';
    await notifyWebhooks(this.d.notifier, { messageId: `${message}_${status}`, projectId: job.projectId, type, job: view });
  }

  /**
   * Ends, for a request, a turn that nobody is working on (no workflow, or its instruction was never delivered).
   * Temporal being down is often why: the request answers now, and the webhooks start in the background.
   */
  async failTurn(job: Pick<JobDoc, '_id' | 'turn'>, error: { code: string; message: string }, turnStatus?: 'stopped'): Promise<{ recorded: boolean }> {
    return this.finishTurn(job._id, job.turn, { status: 'failed', error, ...(turnStatus ? { turnStatus } : {}) }, { webhooks: 'background' });
  }

  /** Ends a turn whose record may be missing (a gateway that died before writing it): the record first, since a retry needs it. */
  async failLostTurn(job: JobDoc, error: { code: string; message: string }): Promise<{ recorded: boolean }> {
    const entry = job.prompts.find((p) => p.turn === job.turn);
    const prompt = entry?.prompt ?? (await this.turnStore.get(job._id, job.turn))?.prompt ?? '';
    await this.turnStore.begin({ jobId: job._id, projectId: job.projectId, model: job.model, turn: job.turn, prompt, at: entry?.at ?? job.updatedAt });
    // The reconciler's pass does not find this job again: a webhook it cannot start is logged.
    return this.finishTurn(job._id, job.turn, { status: 'failed', error }, { webhooks: 'logged' });
  }

  /**
   * Archives the job for good. `whileFirst` runs once, for the archive that ended an active job (the workflow's
   * cancel), before the event and webhook, so a failure after it cannot leave a workflow running. A repeated archive
   * sends the event and webhook once (their keys carry the first archive's time). `by` says what archived it when it
   * was not an admin's request (a pull request merged or closed on GitHub).
   */
  async archive(projectId: string, jobId: string, whileFirst: () => Promise<unknown>, by?: ArchivedBy): Promise<JobDoc | null> {
    const r = await this.jobStore.archive(projectId, jobId);
    if (!r) return null;
    if (r.wasActive) await whileFirst();
    if (r.job.archivedAt && r.job.status === 'archived') {
      const at = r.job.archivedAt;
      await this.eventStore.append(r.job._id, { key: eventKeys.archived(at), type: 'status', turn: r.job.turn, data: { status: 'archived', ...(by ? { by } : {}) } });
      if (this.d.notifier) {
        const job = await jobWithTurns(r.job, this.turnStore);
        await notifyWebhooks(this.d.notifier, { messageId: `msg_${r.job._id}_archived_${at.getTime()}`, projectId: r.job.projectId, type: 'agent_job.archived', job }).catch((err: unknown) =>
          this.d.log?.warn({ err, jobId: r.job._id }, 'could not send the archived webhook'),
        );
      }
    }
    return r.job;
  }

  // ---- a plan job's plan: written, revised on feedback, approved ----------------------------------

  /**
   * Shows a plan on the job, awaiting approval: the job, then the event, then the webhook. Only the job's active
   * turn moves, and only to a newer revision; a repeated call finishes the event and webhook of the plan it stored.
   */
  async recordPlan(jobId: string, turn: number, p: { revision: number; plan: string }): Promise<{ recorded: boolean }> {
    const newer = { $or: [{ planRevision: { $exists: false } }, { planRevision: { $lt: p.revision } }] };
    const moved = await this.jobStore.setPlan(jobId, turn, newer, { plan: p.plan, planRevision: p.revision, planStatus: 'awaiting' });
    const job = await this.jobStore.byId(jobId);
    if (job?.status !== 'active' || job.turn !== turn || job.planRevision !== p.revision) return { recorded: false };
    await this.eventStore.append(jobId, { key: eventKeys.planReady(turn, p.revision), type: 'plan.ready', turn, data: { revision: p.revision, plan: p.plan } });
    if (this.d.notifier) {
      const view = await jobWithTurns(job, this.turnStore);
      await notifyWebhooks(this.d.notifier, { messageId: `msg_${jobId}_${turn}_plan_${p.revision}`, projectId: job.projectId, type: 'agent_job.plan_ready', job: view });
    }
    return { recorded: moved };
  }

  /** Records that a person asked for another plan (the workflow took their feedback): the job no longer awaits approval. */
  async askPlanRevision(jobId: string, turn: number, revision: number, feedback: string): Promise<{ recorded: boolean }> {
    const moved = await this.jobStore.setPlan(jobId, turn, { planRevision: revision, planStatus: 'awaiting' }, { planStatus: 'revising' });
    if (moved) await this.eventStore.append(jobId, { key: eventKeys.planRevisionAsked(turn, revision), type: 'plan.revision', turn, data: { revision, feedback } });
    return { recorded: moved };
  }

  /** Records the approval of a plan revision (by the gateway's answer and by the workflow, whichever comes first). */
  async approvePlan(jobId: string, turn: number, revision: number): Promise<{ recorded: boolean }> {
    const moved = await this.jobStore.setPlan(jobId, turn, { planRevision: revision, planStatus: { $ne: 'approved' } }, { planStatus: 'approved' });
    const job = await this.jobStore.byId(jobId);
    if (job?.planRevision === revision && job.planStatus === 'approved') {
      await this.eventStore.append(jobId, { key: eventKeys.planApproved(turn, revision), type: 'plan.approved', turn, data: { revision } });
    }
    return { recorded: moved };
  }

  // ---- the worker's journal of a running turn ----------------------------------------------------

  /** Adds what one model call used; every attempt counts, since every attempt was paid for. */
  recordUsage(jobId: string, turn: number, usage: TurnUsage): Promise<void> {
    return this.turnStore.addUsage(jobId, turn, usage);
  }

  /** A model call or one of its tool calls (bounded and redacted by the worker); `key` from eventKeys.modelCall or eventKeys.step. */
  async recordStep(jobId: string, turn: number, key: string, data: Record<string, unknown>): Promise<void> {
    await this.eventStore.append(jobId, { key, type: 'step', turn, data });
  }

  /** A setup or check command's result; `key` from eventKeys.check. */
  async recordCheck(jobId: string, turn: number, key: string, data: Record<string, unknown>): Promise<void> {
    await this.eventStore.append(jobId, { key, type: 'check', turn, data });
  }

  /** A connection the egress proxy allowed or refused; `key` from eventKeys.egress. */
  async recordEgress(jobId: string, turn: number, key: string, data: Record<string, unknown>): Promise<void> {
    await this.eventStore.append(jobId, { key, type: 'egress', turn, data });
  }

  /** The turn's result before the push (title, summary, checks), kept for a retry that resumes after the push. */
  recordTurnResult(jobId: string, turn: number, result: Pick<TurnDoc, 'title' | 'summary' | 'checks' | 'checksPassed'>): Promise<void> {
    return this.turnStore.update(jobId, turn, result);
  }

  /** Which of the repository's AGENTS.md files the turn's agent read (or why not); written again, harmlessly, by a retry. */
  recordProjectInstructions(jobId: string, turn: number, projectInstructions: ProjectInstructionsRecord): Promise<void> {
    return this.turnStore.update(jobId, turn, { projectInstructions });
  }

  /** The pushed commit, the turn's durable step (a retry resumes after it), and its event. */
  async recordPush(jobId: string, turn: number, push: { startCommit: string; commit: string; filesChanged: FileStat[] }, diff?: TurnDiff): Promise<void> {
    // The diff before the turn's step: a client that sees the commit can read its diff.
    if (diff) await this.diffStore.put(jobId, turn, diff);
    await this.turnStore.update(jobId, turn, push);
    await this.eventStore.append(jobId, { key: eventKeys.commit(turn, push.commit), type: 'commit', turn, data: { sha: push.commit, filesChanged: push.filesChanged } });
  }

  /** A gap-loop job's re-ask of its questions; an older turn's result never replaces a newer one. */
  recordGapCheck(jobId: string, result: GapCheckResult): Promise<void> {
    return this.jobStore.recordGapCheck(jobId, result);
  }
}
