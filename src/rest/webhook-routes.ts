import { z } from 'zod';
import type { Deps } from '../deps';
import { deliveryToJson, endpointToJson, WEBHOOK_EVENTS } from '../webhooks/store';
import { WebhookService } from '../webhooks/service';
import { projectOrigins } from '../edge/cors';
import { createdWebhookBody, deletedBody, redeliveryBody, webhookDeliveriesBody, webhookListBody } from './response-schemas';
import { route, type Route } from './router';

const createWebhookBody = z.strictObject({
  url: z.string().max(2000, 'must be at most 2000 characters'),
  events: z.array(z.enum(WEBHOOK_EVENTS)).max(WEBHOOK_EVENTS.length).optional(),
});

const redeliverBody = z.strictObject({ messageId: z.string().min(1).max(200) });

/** Webhook endpoints of a project (Standard Webhooks), their delivery logs and redeliveries. */
export function webhookRoutes(deps: Deps): Route[] {
  const service = new WebhookService({ tenancy: deps.tenancy, webhooks: deps.webhooks, notifier: deps.notifier });
  const cors = projectOrigins(deps.tenancy, deps.config.corsOrigins);
  return [
    route({
      method: 'POST',
      path: '/v2/agent/{projectId}/webhooks',
      summary: 'Add a webhook endpoint (https; no private address unless allowed); the answer shows its signing secret once',
      auth: 'admin',
      cors,
      body: createWebhookBody,
      responses: { 201: { description: 'The endpoint and its whsec_… secret', json: createdWebhookBody } },
      handler: async (req) => {
        const { endpoint, secret } = await service.create(req.caller, req.params.projectId!, req.body);
        return { status: 201, body: { ...endpointToJson(endpoint), secret } };
      },
    }),
    route({
      method: 'GET',
      path: '/v2/agent/{projectId}/webhooks',
      summary: "List the project's webhook endpoints (never their secrets)",
      auth: 'admin',
      cors,
      responses: { 200: { description: 'The endpoints', json: webhookListBody } },
      handler: async (req) => ({ status: 200, body: { webhooks: (await service.list(req.caller, req.params.projectId!)).map(endpointToJson) } }),
    }),
    route({
      method: 'DELETE',
      path: '/v2/agent/{projectId}/webhooks/{webhookId}',
      summary: 'Delete a webhook endpoint; deliveries still retrying to it stop',
      auth: 'admin',
      cors,
      responses: { 200: { description: 'Deleted', json: deletedBody } },
      handler: async (req) => {
        await service.remove(req.caller, req.params.projectId!, req.params.webhookId!);
        return { status: 200, body: { id: req.params.webhookId!, deleted: true } };
      },
    }),
    route({
      method: 'GET',
      path: '/v2/agent/{projectId}/webhooks/{webhookId}/deliveries',
      summary: "The endpoint's delivery log: every attempt, newest first",
      auth: 'admin',
      cors,
      responses: { 200: { description: 'Delivery attempts', json: webhookDeliveriesBody } },
      handler: async (req) => ({ status: 200, body: { deliveries: (await service.deliveries(req.caller, req.params.projectId!, req.params.webhookId!)).map(deliveryToJson) } }),
    }),
    route({
      method: 'POST',
      path: '/v2/agent/{projectId}/webhooks/{webhookId}/redeliver',
      summary: 'Send a message to the endpoint again, with the same webhook-id',
      auth: 'admin',
      cors,
      body: redeliverBody,
      responses: { 202: { description: 'A new delivery has started', json: redeliveryBody } },
      handler: async (req) => {
        await service.redeliver(req.caller, req.params.projectId!, req.params.webhookId!, req.body.messageId);
        return { status: 202, body: { messageId: req.body.messageId, endpointId: req.params.webhookId!, redelivering: true } };
      },
    }),
  ];
}
