import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** GCM's full tag: a shorter one would let a forger try far fewer guesses. */
const tagBytes = 16;

/**
 * AES-256-GCM with DOCENT_SECRET_KEY: secrets docent must read back (webhook signing secrets, project secrets) are
 * stored as `v2.<iv>.<tag>.<ciphertext>`, bound to a context (for a project secret: its project and name) as
 * associated data, so a sealed value copied to another row does not open there. `v1` values (no context) still open.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {}

  seal(plain: string, context = ''): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: tagBytes });
    cipher.setAAD(Buffer.from(`docent:${context}`, 'utf8'));
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v2', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), sealed.toString('base64url')].join('.');
  }

  /** Opens a `v2` value sealed with the same context, or a `v1` value; throws for anything else or a tag under 16 bytes. */
  open(box: string, context = ''): string {
    const [version, iv, tag, sealed, extra] = box.split('.');
    if ((version !== 'v1' && version !== 'v2') || !iv || !tag || sealed === undefined || extra !== undefined) throw new Error('not a sealed secret');
    const authTag = Buffer.from(tag, 'base64url');
    if (authTag.length !== tagBytes) throw new Error(`a sealed secret's tag must be ${tagBytes} bytes, not ${authTag.length}`);
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'), { authTagLength: tagBytes });
    if (version === 'v2') decipher.setAAD(Buffer.from(`docent:${context}`, 'utf8'));
    decipher.setAuthTag(authTag);
    return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8');
  }

  /** Whether a value was sealed before contexts existed (`v1`): it should be sealed again with its context. */
  static unbound(box: string): boolean {
    return box.startsWith('v1.');
  }
}
