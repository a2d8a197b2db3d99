import type { DataConverter } from '@temporalio/common';
import type { TemporalConfig } from '../config';
import { AesGcmPayloadCodec } from './payload-codec';

/** Address, TLS (mTLS with a client pair) and API key, in the shape both the client's and the worker's connections take. */
export function temporalConnectionOptions(t: TemporalConfig) {
  return { address: t.address, ...(t.tls && { tls: t.tls }), ...(t.apiKey && { apiKey: t.apiKey }) };
}

const codecOf = (t: TemporalConfig) => t.payloadKeys && new AesGcmPayloadCodec(t.payloadKeys, { allowPlaintext: t.allowPlaintextPayloads });

/**
 * Encrypts payloads when DOCENT_PAYLOAD_KEYS is set, and then refuses clear ones (unless DOCENT_PAYLOAD_ALLOW_PLAINTEXT);
 * every client and worker of one deployment uses the same.
 */
export function temporalDataConverter(t: TemporalConfig): DataConverter | undefined {
  const codec = codecOf(t);
  return codec ? { payloadCodecs: [codec] } : undefined;
}
