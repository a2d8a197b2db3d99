// `webhook redeliver`, apart from the other webhook commands: only it needs Temporal's client.
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type { Config } from '../config';
import { AppError } from '../errors';
import { temporalConnectionOptions, temporalDataConverter } from '../temporal/connection';
import { redeliver } from '../webhooks/notify';
import type { Output } from '../admin/tenancy-operations';
import type { WebhookStores } from '../admin/webhook-operations';

/** Starts a new delivery of a stored message through Temporal, with the same webhook-id. */
export async function redeliverWebhook(s: WebhookStores, config: Config, projectId: string, endpointId: string, messageId: string): Promise<Output> {
  if (!(await s.webhooks.get(projectId, endpointId))) throw new AppError('not_found', `project ${projectId} has no webhook ${endpointId}`);
  const message = await s.webhooks.getMessage(projectId, messageId);
  if (!message) throw new AppError('not_found', `project ${projectId} has no message ${messageId}`);
  // The deployment's TLS and payload keys, as every other client: workers refuse a clear payload once keys are set.
  const connection = await Connection.connect(temporalConnectionOptions(config.temporal));
  try {
    const temporal = new Client({ connection, namespace: config.temporal.namespace, dataConverter: temporalDataConverter(config.temporal) });
    await redeliver(
      { webhooks: s.webhooks, temporal, taskQueuePrefix: config.temporal.taskQueuePrefix },
      { messageId, projectId, type: message.type, payload: message.payload, endpointId, nonce: randomBytes(6).toString('hex') },
    );
  } finally {
    await connection.close();
  }
  return { text: `redelivering ${messageId} to ${endpointId}`, json: { messageId, endpointId, redelivering: true } };
}
