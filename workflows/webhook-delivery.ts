import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { WebhookDeliveryInput } from './webhook-delivery-contract';

/**
 * Delivers one webhook message to each subscribed endpoint: every endpoint is retried on its own, with backoff, for a
 * day; every attempt carries the message id as `webhook-id`, and the activity logs each attempt.
 */
export async function webhookDelivery(input: WebhookDeliveryInput): Promise<void> {
  const { deliverWebhook } = proxyActivities<Activities>({
    startToCloseTimeout: '30 seconds',
    scheduleToCloseTimeout: '24 hours',
    retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '1 hour', nonRetryableErrorTypes: ['WebhookRefused'] },
  });
  // An endpoint that never answers gives up after a day; the others are not held back by it.
  await Promise.allSettled(input.endpointIds.map((endpointId) => deliverWebhook({ messageId: input.messageId, endpointId, type: input.type, payload: input.payload })));
}
