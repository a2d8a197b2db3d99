import { type Client as TemporalClient, ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { type IndexingProgress, runningIndexingProgress } from './ingest-progress';
import { resolveRepository } from '../git/access';
import { AppError } from '../errors';
import { docsSyncScheduleId, docsSyncSchedulePrefix, type DocsSyncInput, type DocsSyncResult, isSiteSource } from '../../workflows/docs-sync-contract';
import { DOCS_TASK_QUEUE, taskQueueName } from '../../workflows/task-queues';

/** The Temporal client and settings every docs-sync call needs. */
export interface DocsSyncSchedules {
  temporal: TemporalClient;
  taskQueuePrefix: string;
  /** Where `owner/name` repositories live, to match a push to the repositories followed. */
  gitBaseUrl: string;
}

/** What the schedule remembers to match pushes: the clone URL and branch (readable in the list, without describing each). */
interface FollowMemo {
  cloneUrl?: string;
  ref?: string;
  /** The forge connection the repository resolved through; absent: the deployment's. Only its webhooks' pushes sync it. */
  forgeId?: string;
}

// A sync runs far below this; a stuck one must not hold the schedule (runs never overlap) for ever.
const syncTimeout = 60 * 60_000;

/** `10m`, `1h`, `1d`… as milliseconds; at least a minute, at most a week. */
export function parseEvery(every: string): number {
  const m = /^(\d+)(m|h|d)$/.exec(every);
  const ms = m ? Number(m[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'm' | 'h' | 'd'] : Number.NaN;
  if (!(ms >= 60_000 && ms <= 7 * 86_400_000)) throw new AppError('invalid_argument', `--every must be minutes, hours or days between 1m and 7d (e.g. 10m), not "${every}"`);
  return ms;
}

function memoOf(input: DocsSyncInput, gitBaseUrl: string): FollowMemo {
  return isSiteSource(input) ? {} : { cloneUrl: resolveRepository(input.repository, gitBaseUrl).cloneUrl, ref: input.ref, ...(input.forgeId ? { forgeId: input.forgeId } : {}) };
}

function scheduleParts(s: DocsSyncSchedules, input: DocsSyncInput, everyMs: number) {
  return {
    spec: { intervals: [{ every: everyMs }] },
    // Syncs of one domain never overlap; a trigger during one runs once right after it.
    policies: { overlap: ScheduleOverlapPolicy.BUFFER_ONE },
    action: {
      type: 'startWorkflow' as const,
      workflowType: 'docsSync',
      workflowId: docsSyncScheduleId(s.taskQueuePrefix, input.domain),
      taskQueue: taskQueueName(s.taskQueuePrefix, DOCS_TASK_QUEUE),
      args: [input],
      workflowExecutionTimeout: syncTimeout,
      // What the Temporal UI shows beside each sync of the schedule.
      staticSummary: isSiteSource(input)
        ? `docs of ${input.domain} from the site ${input.sitemap}`
        : `docs of ${input.domain} from ${input.repository}@${input.ref}${input.docsPath ? `:${input.docsPath}` : ''}`,
    },
  };
}

/**
 * Follows a domain's docs: creates its schedule (first sync at once unless told), or replaces what an existing one
 * follows. The first sync is a trigger with the schedule's own BUFFER_ONE, never the schedule's `triggerImmediately`
 * state: the SDK starts that one with ALLOW_ALL, a run the schedule does not count as running, so the next trigger or
 * interval would start a second sync of the same index beside it (and its publish delete the other's new passages).
 */
export async function followDocs(s: DocsSyncSchedules, input: DocsSyncInput, everyMs: number, opts: { firstNow?: boolean } = {}): Promise<void> {
  const scheduleId = docsSyncScheduleId(s.taskQueuePrefix, input.domain);
  const memo = memoOf(input, s.gitBaseUrl);
  const parts = scheduleParts(s, input, everyMs);
  const handle = s.temporal.schedule.getHandle(scheduleId);
  try {
    await s.temporal.schedule.create({ scheduleId, ...parts, memo: { ...memo } });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    // The memo cannot be updated: a schedule following another repository is made again. The new schedule would not
    // know of the old one's running sync, so the old one starts nothing more and its sync ends first.
    await handle.pause('replaced by docs follow');
    await untilNoSyncRuns(s, input.domain);
    await handle.delete();
    await s.temporal.schedule.create({ scheduleId, ...parts, memo: { ...memo } });
  }
  if (opts.firstNow ?? true) await handle.trigger(ScheduleOverlapPolicy.BUFFER_ONE);
}

/** Stops following; the served docs stay as they are. */
export async function unfollowDocs(s: DocsSyncSchedules, domain: string): Promise<void> {
  await s.temporal.schedule
    .getHandle(docsSyncScheduleId(s.taskQueuePrefix, domain))
    .delete()
    .catch((err: unknown) => {
      if (err instanceof ScheduleNotFoundError) throw new AppError('not_found', `${domain} is not followed`);
      throw err;
    });
}

async function describeFollowed(s: DocsSyncSchedules, domain: string) {
  return s.temporal.schedule
    .getHandle(docsSyncScheduleId(s.taskQueuePrefix, domain))
    .describe()
    .catch((err: unknown) => {
      if (err instanceof ScheduleNotFoundError) throw new AppError('not_found', `${domain} is not followed (docent docs follow --domain ${domain} --repo …)`);
      throw err;
    });
}

/** What the domain's schedule follows, or undefined when the domain is not followed. */
export async function followedSource(s: DocsSyncSchedules, domain: string): Promise<DocsSyncInput | undefined> {
  const d = await describeFollowed(s, domain).catch((err: unknown) => {
    if (err instanceof AppError && err.code === 'not_found') return undefined;
    throw err;
  });
  return (d?.action.type === 'startWorkflow' ? d.action.args?.[0] : undefined) as DocsSyncInput | undefined;
}

/** The runs the schedule started that Temporal still lists, oldest first, running ones last. */
function runsOf(d: Awaited<ReturnType<typeof describeFollowed>>): Array<{ workflowId: string; runId: string }> {
  const recent = d.info.recentActions.map((a) => a.action.workflow);
  const running = d.info.runningActions.map((a) => a.workflow);
  return [...recent, ...running].map((w) => ({ workflowId: w.workflowId, runId: w.firstExecutionRunId }));
}

async function resultOf(s: DocsSyncSchedules, run: { workflowId: string; runId: string }): Promise<DocsSyncResult> {
  try {
    return await s.temporal.workflow.getHandle<(i: DocsSyncInput) => Promise<DocsSyncResult>>(run.workflowId, run.runId).result();
  } catch (err) {
    if (err instanceof WorkflowFailedError) throw new AppError('failed_precondition', `sync failed: ${err.cause?.message ?? err.message}`);
    throw err;
  }
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until no sync the schedule started is running, and returns the schedule's description then. Besides the runs
 * the schedule counts as running, its recent runs are asked: a run started with ALLOW_ALL (a trigger from the Temporal
 * UI or CLI, or a follow by an earlier docent) is listed among them but never counted, and still writes the index.
 */
async function untilNoSyncRuns(s: DocsSyncSchedules, domain: string): Promise<FollowedSchedule> {
  const closed = new Set<string>();
  for (;;) {
    const d = await describeFollowed(s, domain);
    if (d.info.runningActions.length === 0 && !(await aRecentRunIsRunning(s, d, closed))) return d;
    await pause(300);
  }
}

type FollowedSchedule = Awaited<ReturnType<typeof describeFollowed>>;

/** Whether one of the schedule's recent runs still runs; those found closed go into `closed` and are not asked again. */
async function aRecentRunIsRunning(s: DocsSyncSchedules, d: FollowedSchedule, closed: Set<string>): Promise<boolean> {
  for (const { action } of d.info.recentActions) {
    const w = action.workflow;
    if (closed.has(w.firstExecutionRunId)) continue;
    const status = await s.temporal.workflow
      .getHandle(w.workflowId, w.firstExecutionRunId)
      .describe()
      .then((info) => info.status.name)
      .catch((err: unknown) => {
        // Past the namespace's retention: long closed.
        if (err instanceof WorkflowNotFoundError) return 'GONE';
        throw err;
      });
    if (status === 'RUNNING') return true;
    closed.add(w.firstExecutionRunId);
  }
  return false;
}

/** The second a schedule's run was due: Temporal names the run `<workflowId>-<that second, RFC 3339>`. */
const runSecond = (workflowId: string) => /-(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)$/.exec(workflowId)?.[1];
const thisSecond = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

/**
 * Runs one sync now through the schedule (so it never overlaps a scheduled one) and waits for its result. Temporal
 * names a schedule's runs by the second they were due and drops a second start of the same name, so the trigger waits
 * for any running sync to end and for a second no run has used.
 */
export async function syncDocsNow(s: DocsSyncSchedules, domain: string, opts: { appearWithinMs?: number } = {}): Promise<DocsSyncResult> {
  const d = await untilNoSyncRuns(s, domain);
  const runs = runsOf(d);
  const used = new Set(runs.map((r) => runSecond(r.workflowId)));
  while (used.has(thisSecond())) await pause(100);
  const seen = new Set(runs.map((r) => r.runId));
  // A run due before this trigger (one buffered behind another, not yet listed as running) read the docs before the
  // caller's change: only a run named for this second or later is this trigger's.
  const triggered = thisSecond();
  await s.temporal.schedule.getHandle(docsSyncScheduleId(s.taskQueuePrefix, domain)).trigger(ScheduleOverlapPolicy.BUFFER_ONE);
  const deadline = Date.now() + (opts.appearWithinMs ?? 60_000);
  for (;;) {
    const fresh = runsOf(await describeFollowed(s, domain)).find((r) => !seen.has(r.runId) && (runSecond(r.workflowId) ?? '') >= triggered);
    if (fresh) return resultOf(s, fresh);
    if (Date.now() > deadline) throw new AppError('unavailable', `no sync of ${domain} started: is a worker running?`);
    await pause(300);
  }
}

export interface DocsSyncStatus {
  domain: string;
  /** What the schedule follows. */
  source: DocsSyncInput;
  everyMs: number;
  /** The newest sync that succeeded, if Temporal still lists it. */
  lastSuccess?: DocsSyncResult;
  /** The newest finished sync: when it ran, how long it took and why it failed, if it did. */
  last?: { workflowId: string; startedAt: Date; durationMs?: number; status: string; error?: string };
  running: boolean;
  /** How far the running sync's indexing is (pages, passages, rate, time left), while it embeds and indexes. */
  progress?: IndexingProgress;
  nextSyncAt?: Date;
}

/** What the schedule and its newest runs say about a followed domain. */
export async function docsSyncStatus(s: DocsSyncSchedules, domain: string): Promise<DocsSyncStatus> {
  const d = await describeFollowed(s, domain);
  const input = (d.action.type === 'startWorkflow' ? d.action.args?.[0] : undefined) as DocsSyncInput;
  const interval = d.spec.intervals?.[0]?.every;
  const status: DocsSyncStatus = {
    domain,
    source: input,
    everyMs: typeof interval === 'number' ? interval : Number(interval ?? 0),
    running: d.info.runningActions.length > 0,
    nextSyncAt: d.info.nextActionTimes[0],
  };
  const current = d.info.runningActions[0]?.workflow;
  if (current) status.progress = await runningIndexingProgress(s.temporal, current.workflowId).catch(() => undefined);
  const finished = d.info.recentActions.map((a) => a.action.workflow).reverse();
  for (const w of finished) {
    const handle = s.temporal.workflow.getHandle<(i: DocsSyncInput) => Promise<DocsSyncResult>>(w.workflowId, w.firstExecutionRunId);
    const info = await handle.describe();
    if (info.status.name === 'RUNNING') continue;
    if (!status.last) {
      const error =
        info.status.name === 'COMPLETED'
          ? undefined
          : await handle.result().then(
              () => undefined,
              (err: unknown) => (err instanceof WorkflowFailedError ? (err.cause?.message ?? err.message) : String(err)),
            );
      status.last = {
        workflowId: w.workflowId,
        startedAt: info.startTime,
        durationMs: info.closeTime ? info.closeTime.getTime() - info.startTime.getTime() : undefined,
        status: info.status.name,
        error,
      };
    }
    if (info.status.name === 'COMPLETED') {
      status.lastSuccess = await handle.result();
      break;
    }
  }
  return status;
}

/**
 * For the GitHub `push` webhook: runs the sync of every domain following this repository and branch. A repeated
 * delivery while a sync waits adds nothing (one buffered run per schedule); after it, the sync finds nothing changed.
 * Returns the domains whose sync was started.
 */
export async function syncOnPush(
  s: DocsSyncSchedules,
  repository: string,
  ref: string,
  forgeId = 'deployment',
  /** Whether the delivery may start this domain's sync (its scope: src/github/delivery-scope.ts). */
  mayStart: (domain: string) => Promise<boolean> = async () => true,
): Promise<string[]> {
  let cloneUrl: string;
  try {
    cloneUrl = resolveRepository(repository, s.gitBaseUrl).cloneUrl;
  } catch {
    return [];
  }
  const branch = ref.replace(/^refs\/(heads|tags)\//, '');
  const prefix = docsSyncSchedulePrefix(s.taskQueuePrefix);
  const triggered: string[] = [];
  for await (const summary of s.temporal.schedule.list()) {
    if (!summary.scheduleId.startsWith(prefix)) continue;
    const memo = summary.memo as Partial<FollowMemo> | undefined;
    // A push another connection's webhook reports is no news of this source, whatever repository it names.
    if (memo?.cloneUrl !== cloneUrl || memo.ref !== branch || (memo.forgeId ?? 'deployment') !== forgeId) continue;
    const domain = summary.scheduleId.slice(prefix.length);
    if (!(await mayStart(domain))) continue;
    await s.temporal.schedule.getHandle(summary.scheduleId).trigger(ScheduleOverlapPolicy.BUFFER_ONE);
    triggered.push(domain);
  }
  return triggered;
}

/**
 * Queues one sync now, behind a running one as the schedule's BUFFER_ONE queues it, without waiting for it: Mintlify's
 * deploy update. The second of the trigger names the run that is this trigger's (Temporal names runs by it).
 */
export async function queueDocsSync(s: DocsSyncSchedules, domain: string): Promise<{ triggeredAt: string }> {
  // A second a run already used would start nothing (Temporal drops the same run name), and name that run as this one.
  const used = new Set(runsOf(await describeFollowed(s, domain)).map((r) => runSecond(r.workflowId)));
  while (used.has(thisSecond())) await pause(100);
  const triggeredAt = thisSecond();
  await s.temporal.schedule.getHandle(docsSyncScheduleId(s.taskQueuePrefix, domain)).trigger(ScheduleOverlapPolicy.BUFFER_ONE);
  return { triggeredAt };
}

export type QueuedSyncState = { run?: { workflowId: string; runId: string } } & (
  | { status: 'queued' }
  | { status: 'in_progress'; startedAt: Date }
  | { status: 'success'; startedAt: Date; endedAt: Date; result: DocsSyncResult }
  | { status: 'failure'; startedAt: Date; endedAt: Date; error: string }
);

/** Where the sync a trigger queued is: its run found by its second (or the run found before), then that run's state. */
export async function queuedSyncState(s: DocsSyncSchedules, domain: string, q: { triggeredAt: string; run?: { workflowId: string; runId: string } }): Promise<QueuedSyncState> {
  const run = q.run ?? runsOf(await describeFollowed(s, domain)).find((r) => (runSecond(r.workflowId) ?? '') >= q.triggeredAt);
  if (!run) return { status: 'queued' };
  const handle = s.temporal.workflow.getHandle<(i: DocsSyncInput) => Promise<DocsSyncResult>>(run.workflowId, run.runId);
  const info = await handle.describe();
  const startedAt = info.startTime;
  if (info.status.name === 'RUNNING') return { run, status: 'in_progress', startedAt };
  const endedAt = info.closeTime ?? new Date();
  if (info.status.name === 'COMPLETED') return { run, status: 'success', startedAt, endedAt, result: await handle.result() };
  const error = await handle.result().then(
    () => info.status.name,
    (err: unknown) => (err instanceof WorkflowFailedError ? (err.cause?.message ?? err.message) : info.status.name),
  );
  return { run, status: 'failure', startedAt, endedAt, error };
}
