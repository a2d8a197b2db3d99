// The job reconciler workflow's contract: its input, result and schedule.

export interface ReconcileJobsInput {
  /** Only jobs unchanged for this long are judged, so a create or follow-up still starting is left alone. */
  olderThanMs: number;
}

export interface ReconcileJobsResult {
  /** Active jobs whose workflow was not running, now failed with a retryable error. */
  failed: string[];
}

/** How often the worker's schedule runs the reconciler, and how long a job must be unchanged to be judged. */
export const RECONCILE_EVERY_MS = 60_000;
export const RECONCILE_GRACE_MS = 120_000;

/** One reconciler schedule per deployment (task queue prefix). */
export const reconcileScheduleId = (taskQueuePrefix: string) => `${taskQueuePrefix}docent-reconcile-jobs`;

/** A turn a client stopped while no workflow was running it: the reconciler ends it as the job's workflow would. */
export interface StopOrphanTurnInput {
  jobId: string;
  turn: number;
}

/** One per stopped turn: a repeated stop joins the first. */
export const stopOrphanTurnWorkflowId = (jobId: string, turn: number) => `stop-orphan-turn-${jobId}-${turn}`;
