import { createCipheriv, randomBytes } from 'node:crypto';
import { SecretBox } from '../../src/crypto/secret-box';

// Sealed project secrets are bound to their project and name, and only a full 16-byte GCM tag opens them.
describe('secret box', () => {
  const key = randomBytes(32);
  const box = new SecretBox(key);

  /** A value sealed the way docent sealed before contexts existed: `v1`, no associated data. */
  function sealV1(plain: string): { sealed: string; parts: string[] } {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const parts = ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')];
    return { sealed: parts.join('.'), parts };
  }

  it('opens a value only under the context it was sealed with', () => {
    const sealed = box.seal('dpl_0123456789', 'project-secret:["web","DEPLOY_TOKEN"]');
    expect(box.open(sealed, 'project-secret:["web","DEPLOY_TOKEN"]')).toBe('dpl_0123456789');
    // Copied to another project's row, or another name's, it does not open.
    expect(() => box.open(sealed, 'project-secret:["other","DEPLOY_TOKEN"]')).toThrow();
    expect(() => box.open(sealed, 'project-secret:["web","NPM_TOKEN"]')).toThrow();
    expect(() => box.open(sealed)).toThrow();
  });

  it('refuses a tag shorter than 16 bytes, even one that is a true prefix of the real tag', () => {
    const { parts } = sealV1('whsec_short_tag_value');
    const short = [parts[0], parts[1], Buffer.from(parts[2]!, 'base64url').subarray(0, 4).toString('base64url'), parts[3]].join('.');
    expect(() => box.open(short)).toThrow(/16 bytes/);
    const bound = box.seal('dpl_0123456789', 'c').split('.');
    bound[2] = Buffer.from(bound[2]!, 'base64url').subarray(0, 12).toString('base64url');
    expect(() => box.open(bound.join('.'), 'c')).toThrow(/16 bytes/);
  });

  it('still opens a value sealed before contexts existed, and says it should be sealed again', () => {
    const { sealed } = sealV1('whsec_legacy_value');
    expect(box.open(sealed)).toBe('whsec_legacy_value');
    expect(SecretBox.unbound(sealed)).toBe(true);
    expect(SecretBox.unbound(box.seal('x', 'c'))).toBe(false);
  });
});
