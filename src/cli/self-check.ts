import { Client, Connection } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { AGENT_TASK_QUEUE, taskQueueName } from '../../workflows/task-queues';
import type { WorkerSelfCheckResult } from '../../workflows/worker-self-check-contract';
import type { Config } from '../config';
import { temporalConnectionOptions, temporalDataConverter } from '../temporal/connection';

/** Runs the workerSelfCheck workflow on the agent queue and waits for a worker to answer it, within `timeoutMs` in all. */
export async function runWorkerSelfCheck(config: Config, timeoutMs = 30_000): Promise<WorkerSelfCheckResult> {
  // The deadline bounds the connection too: a Temporal that refuses the handshake fails the check at it, not at the SDK's 10 s.
  const connection = await Connection.connect({ ...temporalConnectionOptions(config.temporal), connectTimeout: timeoutMs });
  try {
    const client = new Client({ connection, namespace: config.temporal.namespace, dataConverter: temporalDataConverter(config.temporal) });
    return await client.workflow.execute('workerSelfCheck', {
      taskQueue: taskQueueName(config.temporal.taskQueuePrefix, AGENT_TASK_QUEUE),
      workflowId: `worker-self-check-${randomUUID()}`,
      args: [{ requestedBy: 'docent check' }],
      // No worker polling means no answer: fail at the deadline instead of waiting forever.
      workflowExecutionTimeout: timeoutMs,
    });
  } finally {
    await connection.close();
  }
}
