import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { Webhook } from 'standardwebhooks';
import { OutboundRefused, type OutboundGuard } from '../src/net/outbound';
import type { WebhookStore } from '../src/webhooks/store';
import type { DeliverWebhookInput } from '../workflows/webhook-delivery-contract';

export interface WebhookDeps {
  webhooks: WebhookStore;
  guard: OutboundGuard;
}

const timeoutMs = 15_000;

/** POSTs the body to the URL at an address checked beforehand (no second DNS answer, no redirects); resolves with the status. */
function post(url: URL, address: string, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<number> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'docent-webhooks' },
        lookup: (_host, opts, cb) => {
          const family = isIP(address);
          if ((opts as { all?: boolean }).all) (cb as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }]);
          else cb(null, address, family);
        },
        timeout: timeoutMs,
        signal,
      },
      (res) => {
        res.resume(); // the receiver's body is not needed, only its status
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
    req.on('error', reject);
    req.end(body);
  });
}

export function createWebhookActivities(deps: WebhookDeps) {
  return {
    /** One attempt to deliver a message to one endpoint, signed per Standard Webhooks; a non-2xx answer is retried. */
    async deliverWebhook(input: DeliverWebhookInput): Promise<{ status: number } | { skipped: 'endpoint deleted' }> {
      const ctx = Context.current();
      const found = await deps.webhooks.forDelivery(input.endpointId);
      if (!found) return { skipped: 'endpoint deleted' };
      const { endpoint, secret } = found;
      const started = Date.now();
      const log = (status: number | null, error?: string) =>
        deps.webhooks.logDelivery({
          endpointId: endpoint._id,
          projectId: endpoint.projectId,
          messageId: input.messageId,
          type: input.type,
          attempt: ctx.info.attempt,
          at: new Date(),
          status,
          ok: status !== null && status >= 200 && status < 300,
          durationMs: Date.now() - started,
          ...(error ? { error } : {}),
        });
      const url = new URL(endpoint.url);
      let addresses: string[];
      try {
        addresses = await deps.guard.check(url);
      } catch (err) {
        if (!(err instanceof OutboundRefused)) throw err;
        await log(null, err.message);
        if (err.unresolved) throw ApplicationFailure.create({ type: 'WebhookUnreachable', message: err.message });
        throw ApplicationFailure.create({ type: 'WebhookRefused', message: err.message, nonRetryable: true });
      }
      // The timestamp is the attempt's: receivers refuse signatures older than a few minutes.
      const timestamp = new Date();
      const signature = new Webhook(secret).sign(input.messageId, timestamp, input.payload);
      const headers = { 'webhook-id': input.messageId, 'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)), 'webhook-signature': signature };
      let status: number;
      try {
        status = await post(url, addresses[0]!, headers, input.payload, ctx.cancellationSignal);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        await log(null, message);
        throw ApplicationFailure.create({ type: 'WebhookUnreachable', message: `the endpoint could not be reached: ${message}` });
      }
      await log(status, status >= 300 ? `the endpoint answered HTTP ${status}` : undefined);
      if (status < 200 || status >= 300) throw ApplicationFailure.create({ type: 'WebhookRejected', message: `the endpoint answered HTTP ${status}` });
      return { status };
    },
  };
}
