import { AppError } from '../errors';
import { deliveryToJson, endpointToJson, WEBHOOK_EVENTS, type WebhookEvent, type WebhookStore } from '../webhooks/store';
import type { Output, Stores } from './tenancy-operations';

export type WebhookStores = Stores & { webhooks: WebhookStore };

async function mustHaveProject(s: Stores, projectId: string): Promise<void> {
  if (!(await s.tenancy.getProject(projectId))) throw new AppError('not_found', `project ${projectId} not found`);
}

/** Comma-separated or repeated --events, each one of the documented event types. */
export function parseEvents(values: string[] | undefined): WebhookEvent[] | undefined {
  const events = (values ?? []).flatMap((v) => v.split(',')).map((v) => v.trim());
  const unknown = events.filter((e) => !(WEBHOOK_EVENTS as readonly string[]).includes(e));
  if (unknown.length) throw new AppError('invalid_argument', `unknown event ${unknown.join(', ')}; events are ${WEBHOOK_EVENTS.join(', ')}`);
  return events.length ? (events as WebhookEvent[]) : undefined;
}

/** The secret goes to stdout alone (like a key), so `secret=$(docent webhook create …)` works; it is shown only here. */
export async function createWebhook(s: WebhookStores, projectId: string, url: string, events?: WebhookEvent[]): Promise<Output> {
  await mustHaveProject(s, projectId);
  const { endpoint, secret } = await s.webhooks.create(projectId, { url, events });
  return {
    text: secret,
    note: `created webhook ${endpoint._id} for ${endpoint.url} (${endpoint.events.join(', ')}); its signing secret is shown only once, store it now`,
    json: { ...endpointToJson(endpoint), secret },
  };
}

export async function listWebhooks(s: WebhookStores, projectId: string): Promise<Output> {
  await mustHaveProject(s, projectId);
  const list = await s.webhooks.list(projectId);
  const text = list.length ? list.map((e) => `${e._id}  ${e.url}  ${e.events.join(',')}`).join('\n') : `project ${projectId} has no webhooks`;
  return { text, json: list.map(endpointToJson) };
}

export async function deleteWebhook(s: WebhookStores, projectId: string, endpointId: string): Promise<Output> {
  if (!(await s.webhooks.remove(projectId, endpointId))) throw new AppError('not_found', `project ${projectId} has no webhook ${endpointId}`);
  return { text: `deleted webhook ${endpointId}`, json: { id: endpointId, deleted: true } };
}

export async function webhookDeliveries(s: WebhookStores, projectId: string, endpointId: string): Promise<Output> {
  if (!(await s.webhooks.get(projectId, endpointId))) throw new AppError('not_found', `project ${projectId} has no webhook ${endpointId}`);
  const log = await s.webhooks.deliveryLog(endpointId);
  const text = log.length
    ? log.map((d) => `${d.at.toISOString()}  ${d.messageId}  ${d.type}  attempt ${d.attempt}  ${d.status ?? '-'}  ${d.ok ? 'ok' : (d.error ?? 'failed')}`).join('\n')
    : `webhook ${endpointId} has no deliveries yet`;
  return { text, json: log.map(deliveryToJson) };
}
