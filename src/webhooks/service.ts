import { randomBytes } from 'node:crypto';
import type { Caller } from '../auth/api-keys';
import { AppError } from '../errors';
import type { TenancyStore } from '../tenancy/store';
import { redeliver, type Notifier } from './notify';
import type { WebhookEndpointDoc, WebhookEvent, WebhookStore } from './store';

const idShape = /^[A-Za-z0-9_.-]{1,64}$/;

/** Webhook endpoint operations behind the REST routes: the admin key of the project only. */
export class WebhookService {
  constructor(private readonly d: { tenancy: TenancyStore; webhooks: WebhookStore; notifier: Notifier }) {}

  private async authorize(caller: Caller, projectId: string): Promise<void> {
    if (caller.kind !== 'admin') throw new AppError('permission_denied', 'this endpoint needs an admin key');
    if (caller.projectId !== projectId || !(await this.d.tenancy.getProject(projectId))) throw new AppError('not_found', 'project not found');
  }

  private async mustGet(projectId: string, endpointId: string): Promise<WebhookEndpointDoc> {
    const endpoint = idShape.test(endpointId) ? await this.d.webhooks.get(projectId, endpointId) : null;
    if (!endpoint) throw new AppError('not_found', 'webhook endpoint not found');
    return endpoint;
  }

  async create(caller: Caller, projectId: string, input: { url: string; events?: WebhookEvent[] }) {
    await this.authorize(caller, projectId);
    return this.d.webhooks.create(projectId, input);
  }

  async list(caller: Caller, projectId: string) {
    await this.authorize(caller, projectId);
    return this.d.webhooks.list(projectId);
  }

  async remove(caller: Caller, projectId: string, endpointId: string): Promise<void> {
    await this.authorize(caller, projectId);
    await this.mustGet(projectId, endpointId);
    await this.d.webhooks.remove(projectId, endpointId);
  }

  async deliveries(caller: Caller, projectId: string, endpointId: string) {
    await this.authorize(caller, projectId);
    await this.mustGet(projectId, endpointId);
    return this.d.webhooks.deliveryLog(endpointId);
  }

  /** Sends a stored message to the endpoint again, with the same webhook-id (receivers deduplicate on it). */
  async redeliver(caller: Caller, projectId: string, endpointId: string, messageId: string): Promise<void> {
    await this.authorize(caller, projectId);
    await this.mustGet(projectId, endpointId);
    const message = /^[A-Za-z0-9_.-]{1,200}$/.test(messageId) ? await this.d.webhooks.getMessage(projectId, messageId) : null;
    if (!message) throw new AppError('not_found', 'message not found');
    await redeliver(this.d.notifier, { messageId, projectId, type: message.type, payload: message.payload, endpointId, nonce: randomBytes(6).toString('hex') });
  }
}
