import type { Client as TemporalClient } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Db } from 'mongodb';
import { agentJobWorkflowId } from '../../workflows/contracts';
import type { Logger } from '../log';
import type { JobDoc } from './job';
import { JobEventStore } from './job-events';
import { JobStore } from './job-store';
import { TurnStore } from './job-turns';

/** What a user reads on a job the reconciler ended: nothing was working on it, and a retry runs the turn again. */
export const lostTurnError = { code: 'unavailable', message: 'no worker was running this turn (it was interrupted before it started or while it ran); retry it' };

/** Whether Temporal is running the job's workflow; false when it never started or has closed. */
async function isRunning(temporal: TemporalClient, jobId: string): Promise<boolean> {
  try {
    return (await temporal.workflow.getHandle(agentJobWorkflowId(jobId)).describe()).status.name === 'RUNNING';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/**
 * Finds active jobs, unchanged for `olderThanMs`, whose workflow is not running (a gateway killed between the insert
 * and the start, a workflow terminated by hand) and fails their turn with a retryable error, so no job stays active
 * with nobody working on it. Failing rather than starting: a turn of unknown progress is never run twice on its own;
 * the user's retry resumes it (src/agent/service.ts retryJob).
 */
export async function reconcileActiveJobs(deps: { db: Db; temporal: TemporalClient; log?: Logger }, olderThanMs: number): Promise<{ failed: string[] }> {
  const jobs = new JobStore(deps.db);
  const turns = new TurnStore(deps.db);
  const events = new JobEventStore(deps.db);
  const before = new Date(Date.now() - olderThanMs);
  const stale = await deps.db
    .collection<JobDoc>('jobs')
    .find({ status: 'active', updatedAt: { $lt: before } })
    .toArray();
  const failed: string[] = [];
  for (const job of stale) {
    if (await isRunning(deps.temporal, job._id)) continue;
    // The turn's record may be missing (the gateway died before writing it); a retry needs it.
    const entry = job.prompts.find((p) => p.turn === job.turn);
    const prompt = entry?.prompt ?? (await turns.get(job._id, job.turn))?.prompt ?? '';
    await turns.begin({ jobId: job._id, projectId: job.projectId, model: job.model, turn: job.turn, prompt, at: entry?.at ?? job.updatedAt });
    await turns.finish(job._id, job.turn, { status: 'failed', error: lostTurnError });
    await jobs.failTurn(job._id, job.turn, lostTurnError);
    const attempt = (await turns.get(job._id, job.turn))?.attempt ?? 1;
    await events.append(job._id, { key: `t${job.turn}:status:failed:${attempt}`, type: 'status', turn: job.turn, data: { status: 'failed', error: lostTurnError } });
    deps.log?.warn({ jobId: job._id, turn: job.turn }, 'reconciler failed an active job that no workflow was running');
    failed.push(job._id);
  }
  return { failed };
}
