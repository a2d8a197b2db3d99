import type { Db } from 'mongodb';
import type { JobDoc } from '../src/agent/job';
import type { Logger } from '../src/log';
import type { RecordJobStatusInput } from '../workflows/contracts';

export function createJobStatusActivities(db: Db, log?: Logger) {
  return {
    /** Ends a turn: only an active job at this very turn moves, so a retry or a late write never moves a job backwards. */
    async recordJobStatus(input: RecordJobStatusInput): Promise<{ recorded: boolean }> {
      const set: Partial<JobDoc> = { status: input.status, updatedAt: new Date() };
      if (input.prLink !== undefined) set.prLink = input.prLink;
      if (input.error) set.error = input.error;
      if (input.checks !== undefined) Object.assign(set, { checks: input.checks, checksPassed: input.checksPassed ?? null });
      const r = await db.collection<JobDoc>('jobs').updateOne({ _id: input.jobId, turn: input.turn, status: 'active' }, { $set: set });
      // One line per job outcome, with the job id an operator searches for.
      if (r.modifiedCount === 1) log?.info({ jobId: input.jobId, turn: input.turn, status: input.status, errorCode: input.error?.code, prLink: input.prLink }, 'agent job turn finished');
      return { recorded: r.modifiedCount === 1 };
    },
  };
}
