import type { Payload } from '@temporalio/common';
import { z } from 'zod';
import type { Deps } from '../deps';
import { AppError } from '../errors';
import { AesGcmPayloadCodec, PayloadDecryptionError } from '../temporal/payload-codec';
import { route, type CorsPolicy, type Route } from './router';

// Temporal's remote codec protocol: Payloads as proto3 JSON, bytes in base64 (docs.temporal.io, "Codec Server").
const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64');
const jsonPayload = z.object({ metadata: z.record(z.string(), base64).optional(), data: base64.optional() });
const payloadsBody = z.object({ payloads: z.array(jsonPayload).max(1000) });
type JsonPayload = z.infer<typeof jsonPayload>;

const fromJson = (p: JsonPayload): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data ?? '', 'base64'),
});
const toJson = (p: Payload): JsonPayload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});

/**
 * POST /codec/decode and /codec/encode for the Temporal Web UI and CLI (`--codec-endpoint`), so operators can read
 * encrypted payloads. Served only when payload keys and an operator token are both configured.
 */
export function codecRoutes(deps: Deps): Route[] {
  const { payloadKeys, codecToken, uiUrl } = deps.config.temporal;
  if (!payloadKeys || !codecToken) return [];
  // Showing a clear payload to an operator runs nothing, so histories from before encryption stay readable here.
  const codec = new AesGcmPayloadCodec(payloadKeys, { allowPlaintext: true });
  // The Web UI calls from the browser, from its own origin.
  const uiOrigin = new URL(uiUrl).origin;
  const cors: CorsPolicy = { kind: 'origins', allows: async (origin) => origin === uiOrigin };

  const codecRoute = (path: string, summary: string, apply: (p: Payload) => Promise<Payload>) =>
    route({
      method: 'POST',
      path,
      summary,
      auth: 'operator',
      body: payloadsBody,
      cors,
      responses: { 200: { description: 'The payloads, in order', json: payloadsBody } },
      handler: async (req) => {
        const out: JsonPayload[] = [];
        for (const [i, p] of req.body.payloads.entries()) {
          try {
            out.push(toJson(await apply(fromJson(p))));
          } catch (err) {
            if (err instanceof PayloadDecryptionError) throw new AppError('invalid_argument', `payloads[${i}]: ${err.message}`);
            throw err;
          }
        }
        return { status: 200, body: { payloads: out } };
      },
    });

  return [
    codecRoute('/codec/decode', 'Decrypts Temporal payloads for operators (Temporal remote codec protocol)', async (p) => (await codec.decode([p]))[0]!),
    codecRoute('/codec/encode', 'Encrypts Temporal payloads with the current key (Temporal remote codec protocol)', async (p) => (await codec.encode([p]))[0]!),
  ];
}
