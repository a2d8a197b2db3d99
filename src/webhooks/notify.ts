import { WorkflowExecutionAlreadyStartedError, type Client as TemporalClient } from '@temporalio/client';
import type { webhookDelivery } from '../../workflows/webhook-delivery';
import { taskQueueName, WEBHOOK_TASK_QUEUE } from '../../workflows/task-queues';
import { webhookDeliveryWorkflowId, type WebhookDeliveryInput } from '../../workflows/webhook-delivery-contract';
import type { WebhookEvent, WebhookStore } from './store';

export interface Notifier {
  webhooks: WebhookStore;
  temporal: TemporalClient;
  taskQueuePrefix: string;
}

/** Starts one delivery workflow for a message; a message id seen before starts nothing new. */
async function startDelivery(n: Notifier, input: WebhookDeliveryInput, workflowId: string): Promise<void> {
  try {
    await n.temporal.workflow.start<typeof webhookDelivery>('webhookDelivery', {
      workflowId,
      taskQueue: taskQueueName(n.taskQueuePrefix, WEBHOOK_TASK_QUEUE),
      args: [input],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      staticSummary: `${input.type} to ${input.endpointIds.length} endpoint(s)`,
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/**
 * Sends an event to the project's subscribed endpoints. The message id is derived from the event by the caller, so
 * a retried activity or request sends the same message (same `webhook-id`, same bytes) once.
 */
export function notifyWebhooks(n: Notifier, e: { messageId: string; projectId: string; type: WebhookEvent; job: unknown }): Promise<void> {
  return notifyWebhookEvent(n, { messageId: e.messageId, projectId: e.projectId, type: e.type, data: { job: e.job } });
}

/** The same, for any event's `data` (an automation's run events carry the automation and the run, not a job). */
export async function notifyWebhookEvent(n: Notifier, e: { messageId: string; projectId: string; type: WebhookEvent; data: Record<string, unknown> }): Promise<void> {
  const endpoints = await n.webhooks.subscribers(e.projectId, e.type);
  if (endpoints.length === 0) return;
  const at = new Date();
  const message = await n.webhooks.saveMessage({
    _id: e.messageId,
    projectId: e.projectId,
    type: e.type,
    payload: JSON.stringify({ type: e.type, timestamp: at.toISOString(), data: e.data }),
    at,
  });
  const input = { messageId: message._id, projectId: e.projectId, type: message.type, payload: message.payload, endpointIds: endpoints.map((x) => x._id) };
  await startDelivery(n, input, webhookDeliveryWorkflowId(message._id));
}

/** Sends a stored message to one endpoint again, as a new delivery with the same `webhook-id`. */
export async function redeliver(n: Notifier, m: { messageId: string; projectId: string; type: string; payload: string; endpointId: string; nonce: string }): Promise<void> {
  const input = { messageId: m.messageId, projectId: m.projectId, type: m.type, payload: m.payload, endpointIds: [m.endpointId] };
  await startDelivery(n, input, `${webhookDeliveryWorkflowId(m.messageId)}-redeliver-${m.nonce}`);
}
