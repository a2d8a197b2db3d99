import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import protobuf from 'protobufjs';

/** The encoding of an encrypted payload, as Temporal's encryption sample names it. */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
/** Metadata naming the key a payload was encrypted with, so keys can rotate. */
export const KEY_ID_METADATA = 'encryption-key-id';

// Temporal's own Payload message, so the encrypted bytes are what any Temporal codec server would expect inside.
const PayloadMessage = new protobuf.Type('Payload').add(new protobuf.MapField('metadata', 1, 'string', 'bytes')).add(new protobuf.Field('data', 2, 'bytes'));
new protobuf.Root().define('temporal').add(PayloadMessage);

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A payload the configured keys cannot open: unknown key id, or bytes that fail authentication. */
export class PayloadDecryptionError extends Error {
  override name = 'PayloadDecryptionError';
}

export interface PayloadKeys {
  encryptWith: string;
  keys: ReadonlyMap<string, Buffer>;
}

const text = (bytes: Uint8Array | null | undefined) => (bytes ? Buffer.from(bytes).toString('utf8') : undefined);

export interface PayloadCodecOptions {
  /**
   * Read payloads that were never encrypted as they are. Off by default: anyone who can reach Temporal could otherwise
   * start a workflow or send a signal with input of their own. On only while histories from before encryption drain.
   */
  allowPlaintext?: boolean;
}

/**
 * Encrypts each payload whole (metadata and data) with AES-256-GCM under the current key, and decrypts with whichever
 * configured key a payload names. A payload without the encrypted encoding is refused unless `allowPlaintext` is set.
 */
export class AesGcmPayloadCodec implements PayloadCodec {
  constructor(
    private readonly keys: PayloadKeys,
    private readonly options: PayloadCodecOptions = {},
  ) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const keyId = this.keys.encryptWith;
    const key = this.keys.keys.get(keyId)!;
    return payloads.map((payload) => {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      // The key id is authenticated too, so a payload cannot be relabelled to another key.
      cipher.setAAD(Buffer.from(keyId));
      const plain = PayloadMessage.encode(PayloadMessage.fromObject({ metadata: payload.metadata ?? {}, data: payload.data ?? new Uint8Array() })).finish();
      const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return { metadata: { encoding: Buffer.from(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: Buffer.from(keyId) }, data: sealed };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (text(payload.metadata?.encoding) !== ENCRYPTED_ENCODING) {
        if (this.options.allowPlaintext) return payload;
        throw new PayloadDecryptionError(
          'payload is not encrypted although DOCENT_PAYLOAD_KEYS is set; DOCENT_PAYLOAD_ALLOW_PLAINTEXT=1 reads such payloads while histories from before encryption drain',
        );
      }
      const keyId = text(payload.metadata?.[KEY_ID_METADATA]) ?? '';
      const key = this.keys.keys.get(keyId);
      if (!key) throw new PayloadDecryptionError(`payload encrypted with key "${keyId.slice(0, 64)}", which is not among DOCENT_PAYLOAD_KEYS`);
      const sealed = Buffer.from(payload.data ?? new Uint8Array());
      if (sealed.length < IV_BYTES + TAG_BYTES) throw new PayloadDecryptionError('encrypted payload is truncated');
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(keyId));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      let plain: Buffer;
      try {
        plain = Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
      } catch {
        throw new PayloadDecryptionError(`encrypted payload does not authenticate under key "${keyId}"`);
      }
      const inner = PayloadMessage.toObject(PayloadMessage.decode(plain), { bytes: Buffer }) as { metadata?: Record<string, Uint8Array>; data?: Uint8Array };
      return { metadata: inner.metadata ?? {}, data: inner.data ?? new Uint8Array() };
    });
  }
}
