import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import { AppError } from '../errors';
import { OutboundRefused, type OutboundGuard } from '../net/outbound';
import type { SecretBox } from '../crypto/secret-box';

/** The events a webhook endpoint can subscribe to (docs/agent-jobs.md, "Webhooks"). */
export const WEBHOOK_EVENTS = [
  'agent_job.completed',
  'agent_job.failed',
  'agent_job.archived',
  'agent_job.turn_finished',
  'agent_job.plan_ready',
  'automation.run_started',
  'automation.run_failed',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export interface WebhookEndpointDoc {
  _id: string;
  projectId: string;
  url: string;
  events: WebhookEvent[];
  /** The `whsec_…` signing secret, sealed with DOCENT_SECRET_KEY; shown in clear once, at creation. */
  secretSealed: string;
  createdAt: Date;
}

/** One attempt to deliver a message to an endpoint. */
export interface WebhookDeliveryDoc {
  _id: string;
  endpointId: string;
  projectId: string;
  messageId: string;
  type: string;
  attempt: number;
  at: Date;
  /** The receiver's HTTP status, or null when it could not be reached. */
  status: number | null;
  ok: boolean;
  error?: string;
  durationMs: number;
}

export const endpointToJson = (e: WebhookEndpointDoc) => ({ id: e._id, url: e.url, events: e.events, createdAt: e.createdAt.toISOString() });
export const deliveryToJson = (d: WebhookDeliveryDoc) => ({
  messageId: d.messageId,
  type: d.type,
  attempt: d.attempt,
  at: d.at.toISOString(),
  status: d.status,
  ok: d.ok,
  durationMs: d.durationMs,
  ...(d.error ? { error: d.error } : {}),
});

/** A message as first built: redeliveries and retried notifications send these very bytes. */
export interface WebhookMessageDoc {
  _id: string;
  projectId: string;
  type: WebhookEvent;
  payload: string;
  at: Date;
}

const maxEndpointsPerProject = 20;

export async function ensureWebhookIndexes(db: Db): Promise<void> {
  await db.collection('webhook_endpoints').createIndex({ projectId: 1 });
  await db.collection('webhook_deliveries').createIndex({ endpointId: 1, at: -1 });
}

/** Webhook endpoints of projects and their delivery logs. */
export class WebhookStore {
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox | undefined,
    private readonly guard: OutboundGuard,
  ) {}

  private get endpoints() {
    return this.db.collection<WebhookEndpointDoc>('webhook_endpoints');
  }

  private get deliveries() {
    return this.db.collection<WebhookDeliveryDoc>('webhook_deliveries');
  }

  private get messages() {
    return this.db.collection<WebhookMessageDoc>('webhook_messages');
  }

  /** Stores a message once by id and returns it as first stored. */
  async saveMessage(m: WebhookMessageDoc): Promise<WebhookMessageDoc> {
    await this.messages.updateOne({ _id: m._id }, { $setOnInsert: m }, { upsert: true });
    return (await this.messages.findOne({ _id: m._id })) ?? m;
  }

  getMessage(projectId: string, messageId: string): Promise<WebhookMessageDoc | null> {
    return this.messages.findOne({ _id: messageId, projectId });
  }

  private sealer(): SecretBox {
    if (!this.box) throw new AppError('failed_precondition', 'webhooks are off: the operator must set DOCENT_SECRET_KEY (32 bytes, base64) to store signing secrets');
    return this.box;
  }

  /** Checks the URL as delivery will (https, no private address unless allowed), then stores the endpoint; returns its secret once. */
  async create(projectId: string, input: { url: string; events?: WebhookEvent[] }): Promise<{ endpoint: WebhookEndpointDoc; secret: string }> {
    const box = this.sealer();
    let url: URL;
    try {
      url = new URL(input.url);
    } catch {
      throw new AppError('invalid_argument', 'url must be an absolute https URL');
    }
    if (url.username || url.password) throw new AppError('invalid_argument', 'url must not carry credentials');
    // A name this machine cannot resolve is checked again at every delivery, where the worker resolves it.
    await this.guard.check(url).catch((err: unknown) => {
      if (err instanceof OutboundRefused && err.unresolved) return;
      throw err instanceof OutboundRefused ? new AppError('invalid_argument', `url is refused: ${err.message}`) : err;
    });
    if ((await this.endpoints.countDocuments({ projectId })) >= maxEndpointsPerProject) throw new AppError('failed_precondition', `a project has at most ${maxEndpointsPerProject} webhook endpoints`);
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const endpoint: WebhookEndpointDoc = {
      _id: `wh_${randomBytes(12).toString('hex')}`,
      projectId,
      url: url.toString(),
      events: [...new Set(input.events?.length ? input.events : WEBHOOK_EVENTS)],
      secretSealed: box.seal(secret),
      createdAt: new Date(),
    };
    await this.endpoints.insertOne(endpoint);
    return { endpoint, secret };
  }

  list(projectId: string): Promise<WebhookEndpointDoc[]> {
    return this.endpoints.find({ projectId }).sort({ createdAt: 1 }).toArray();
  }

  get(projectId: string, endpointId: string): Promise<WebhookEndpointDoc | null> {
    return this.endpoints.findOne({ _id: endpointId, projectId });
  }

  async remove(projectId: string, endpointId: string): Promise<boolean> {
    return (await this.endpoints.deleteOne({ _id: endpointId, projectId })).deletedCount === 1;
  }

  /** The endpoints of a project that want this event. */
  subscribers(projectId: string, type: WebhookEvent): Promise<WebhookEndpointDoc[]> {
    return this.endpoints.find({ projectId, events: type }).toArray();
  }

  /** The endpoint with its secret in clear, for signing; null once the endpoint is deleted. */
  async forDelivery(endpointId: string): Promise<{ endpoint: WebhookEndpointDoc; secret: string } | null> {
    const endpoint = await this.endpoints.findOne({ _id: endpointId });
    return endpoint ? { endpoint, secret: this.sealer().open(endpoint.secretSealed) } : null;
  }

  async logDelivery(d: Omit<WebhookDeliveryDoc, '_id'>): Promise<void> {
    await this.deliveries.insertOne({ _id: `${d.endpointId}:${d.messageId}:${d.attempt}:${randomBytes(4).toString('hex')}`, ...d });
  }

  /** The endpoint's latest delivery attempts, newest first. */
  deliveryLog(endpointId: string, limit = 100): Promise<WebhookDeliveryDoc[]> {
    return this.deliveries.find({ endpointId }).sort({ at: -1 }).limit(limit).toArray();
  }
}
