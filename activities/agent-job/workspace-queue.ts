import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { AGENT_TASK_QUEUE, taskQueueName } from '../../workflows/task-queues';

/**
 * The task queue only this worker's clones are worked on through: one per host and workspace folder, so a worker
 * restarted on the same disk gets its clones' pending steps back, and two folders on one host never share one.
 */
export function workspaceQueueName(taskQueuePrefix: string, workspaceDir: string, host = os.hostname()): string {
  const folder = createHash('sha256').update(path.resolve(workspaceDir)).digest('hex').slice(0, 12);
  return `${taskQueueName(taskQueuePrefix, AGENT_TASK_QUEUE)}@${host}/${folder}`;
}
