import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client as TemporalClient } from '@temporalio/client';
import { PayloadDecryptionError } from '../temporal/payload-codec';
import { RECONCILE_EVERY_MS, RECONCILE_GRACE_MS, reconcileScheduleId } from '../../workflows/reconcile-jobs-contract';
import { AGENT_TASK_QUEUE, taskQueueName } from '../../workflows/task-queues';

/**
 * Creates the reconciler's Temporal schedule once per deployment; every worker calls it at start, all but the first
 * find it there. A schedule whose input this deployment's codec refuses (created before DOCENT_PAYLOAD_KEYS was set)
 * is made again, since every run it started would be refused too.
 */
export async function ensureReconcileSchedule(temporal: TemporalClient, taskQueuePrefix: string): Promise<void> {
  const scheduleId = reconcileScheduleId(taskQueuePrefix);
  try {
    await createReconcileSchedule(temporal, taskQueuePrefix);
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    const handle = temporal.schedule.getHandle(scheduleId);
    const readable = await handle.describe().then(
      () => true,
      (e: unknown) => {
        if (e instanceof PayloadDecryptionError) return false;
        throw e;
      },
    );
    if (readable) return;
    await handle.delete();
    await createReconcileSchedule(temporal, taskQueuePrefix).catch((e: unknown) => {
      // Another worker starting at the same moment made it first.
      if (!(e instanceof ScheduleAlreadyRunning)) throw e;
    });
  }
}

async function createReconcileSchedule(temporal: TemporalClient, taskQueuePrefix: string): Promise<void> {
  const scheduleId = reconcileScheduleId(taskQueuePrefix);
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
}
