import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client as TemporalClient } from '@temporalio/client';
import { RECONCILE_EVERY_MS, RECONCILE_GRACE_MS, reconcileScheduleId } from '../../workflows/reconcile-jobs-contract';
import { AGENT_TASK_QUEUE, taskQueueName } from '../../workflows/task-queues';

/** Creates the reconciler's Temporal schedule once per deployment; every worker calls it at start, all but the first find it there. */
export async function ensureReconcileSchedule(temporal: TemporalClient, taskQueuePrefix: string): Promise<void> {
  const scheduleId = reconcileScheduleId(taskQueuePrefix);
  try {
    await temporal.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: RECONCILE_EVERY_MS }] },
      // One run at a time; a run that finds no worker does not pile up behind the next.
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
      action: {
        type: 'startWorkflow',
        workflowType: 'reconcileJobs',
        workflowId: scheduleId,
        taskQueue: taskQueueName(taskQueuePrefix, AGENT_TASK_QUEUE),
        args: [{ olderThanMs: RECONCILE_GRACE_MS }],
        workflowExecutionTimeout: RECONCILE_EVERY_MS * 5,
      },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
}
