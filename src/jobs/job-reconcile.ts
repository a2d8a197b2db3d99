import type { Client as TemporalClient } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import { agentJobWorkflowId, stopTurnSignal } from '../../workflows/agent-job-contract';
import type { Logger } from '../log';
import { stoppedError } from './ledger';
import type { TurnRecord } from './turn-record';

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
export async function reconcileActiveJobs(deps: { ledger: TurnRecord; temporal: TemporalClient; log?: Logger }, olderThanMs: number): Promise<{ failed: string[] }> {
  const stale = await deps.ledger.jobs.staleActive(new Date(Date.now() - olderThanMs));
  const failed: string[] = [];
  for (const job of stale) {
    if (await isRunning(deps.temporal, job._id)) continue;
    await deps.ledger.failLostTurn(job, lostTurnError);
    deps.log?.warn({ jobId: job._id, turn: job.turn }, 'reconciler failed an active job that no workflow was running');
    failed.push(job._id);
  }
  return { failed };
}

/**
 * Ends a turn a client stopped while no workflow ran it, as the job's workflow would on a stop: `stopped`, with its
 * turn.finished event and webhooks. A workflow running the job by now (a retry started meanwhile) is told instead.
 */
export async function finishStoppedTurn(deps: { ledger: TurnRecord; temporal: TemporalClient }, jobId: string, turn: number): Promise<{ recorded: boolean }> {
  if (await isRunning(deps.temporal, jobId)) {
    await deps.temporal.workflow.getHandle(agentJobWorkflowId(jobId)).signal(stopTurnSignal, { turn });
    return { recorded: false };
  }
  return deps.ledger.finishTurn(jobId, turn, { status: 'failed', turnStatus: 'stopped', error: stoppedError });
}
