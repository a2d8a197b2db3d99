import type { Db } from 'mongodb';
import { jobWithTurns } from '../src/agent/job-view';
import type { JobDoc } from '../src/agent/job';
import { JobStore } from '../src/agent/job-store';
import type { JobEventStore } from '../src/agent/job-events';
import type { TurnStore } from '../src/agent/job-turns';
import type { Logger } from '../src/log';
import { notifyWebhooks, type Notifier } from '../src/webhooks/notify';
import type { RecordJobStatusInput } from '../workflows/contracts';

export interface JobStatusDeps {
  db: Db;
  events: JobEventStore;
  turns: TurnStore;
  /** Undefined where the worker has no Temporal client (unit tests): no webhooks then. */
  notifier?: Notifier;
  log?: Logger;
}

export function createJobStatusActivities(deps: JobStatusDeps) {
  const jobs = deps.db.collection<JobDoc>('jobs');
  const store = new JobStore(deps.db);
  return {
    /**
     * Ends a turn: only an active job at this very turn moves, so a retry or a late write never moves a job backwards.
     * Then the turn's record, its events and its webhooks follow; each of those is idempotent, so a retry after a
     * crash finishes what the first attempt began.
     */
    async recordJobStatus(input: RecordJobStatusInput): Promise<{ recorded: boolean }> {
      const turnStatus = input.turnStatus ?? input.status;
      // The turn's record ends first, so a client that sees the job end (and retries it) finds the turn ended too.
      const before = await jobs.findOne({ _id: input.jobId });
      // Read now: a retry accepted right after the job update below must not lend this turn its attempt number.
      const attempt = (await deps.turns.get(input.jobId, input.turn))?.attempt ?? 1;
      if (before?.turn === input.turn && before.status === 'active') {
        await deps.turns.finish(input.jobId, input.turn, {
          status: turnStatus,
          prLink: input.prLink ?? null,
          ...(input.error ? { error: input.error } : {}),
          ...(input.checks !== undefined ? { checks: input.checks } : {}),
        });
      }
      const set: Partial<JobDoc> = { status: input.status, updatedAt: new Date() };
      if (input.prLink !== undefined) set.prLink = input.prLink;
      if (input.error) set.error = input.error;
      if (input.checks !== undefined) Object.assign(set, { checks: input.checks, checksPassed: input.checksPassed ?? null });
      const moved = await store.finishTurn(input.jobId, input.turn, set);
      const job = await jobs.findOne({ _id: input.jobId });
      // A repeated attempt finds the job already where the first one put it, and finishes the rest.
      const ours = job !== null && job.status !== 'archived' && (moved || (job.turn === input.turn && job.status === input.status));
      if (moved) deps.log?.info({ jobId: input.jobId, turn: input.turn, status: input.status, errorCode: input.error?.code, prLink: input.prLink }, 'agent job turn finished');
      if (!ours || !job) return { recorded: false };

      const turnKey = `t${input.turn}`;
      const turn = await deps.turns.get(input.jobId, input.turn);
      if (input.prLink) await deps.events.append(input.jobId, { key: `${turnKey}:pull_request:${attempt}`, type: 'pull_request', turn: input.turn, data: { url: input.prLink } });
      await deps.events.append(input.jobId, {
        key: `${turnKey}:finished:${attempt}`,
        type: 'turn.finished',
        turn: input.turn,
        data: { status: turnStatus, usage: turn?.usage ?? null, prLink: input.prLink ?? null, ...(input.error ? { error: input.error } : {}) },
      });
      await deps.events.append(input.jobId, {
        key: `${turnKey}:status:${input.status}:${attempt}`,
        type: 'status',
        turn: input.turn,
        data: { status: input.status, prLink: job.prLink, ...(input.error ? { error: input.error } : {}) },
      });
      if (deps.notifier) {
        const view = await jobWithTurns(job, deps.turns);
        const message = `msg_${input.jobId}_${input.turn}_${attempt}`;
        await notifyWebhooks(deps.notifier, { messageId: `${message}_turn`, projectId: job.projectId, type: 'agent_job.turn_finished', job: view });
        await notifyWebhooks(deps.notifier, {
          messageId: `${message}_${input.status}`,
          projectId: job.projectId,
          type: input.status === 'completed' ? 'agent_job.completed' : 'agent_job.failed',
          job: view,
        });
      }
      return { recorded: moved };
    },
  };
}
