import { OutputCapture } from '../../src/sandbox/output';
import { redactDeep, secretRedactor, secretStreamRedactor } from '../../src/secrets/redactor';

// What leaves the sandbox passes through one redactor built from the turn's secrets.
describe('secret redactor', () => {
  const redact = secretRedactor({ NPM_TOKEN: 'npm_abcdefgh?+/', DEPLOY_KEY: 'dk-0123456789' });

  it('replaces the raw value and its base64 forms (standard, unpadded, url-safe) with the secret name', () => {
    const value = 'npm_abcdefgh?+/';
    const b64 = Buffer.from(value).toString('base64');
    const printed = `raw ${value}\nb64 ${b64}\nnopad ${b64.replace(/=+$/, '')}\nurl ${Buffer.from(value).toString('base64url')}`;
    expect(redact(printed)).toBe('raw [secret NPM_TOKEN]\nb64 [secret NPM_TOKEN]\nnopad [secret NPM_TOKEN]\nurl [secret NPM_TOKEN]');
  });

  it('treats characters of the value as text, not as a pattern', () => {
    expect(redact('npm_abcdefghX+/')).toBe('npm_abcdefghX+/');
  });

  it('redacts every string of a tool result, and leaves text without secrets alone', () => {
    expect(redactDeep({ exitCode: 0, output: 'key=dk-0123456789', lines: ['dk-0123456789'] }, redact)).toEqual({ exitCode: 0, output: 'key=[secret DEPLOY_KEY]', lines: ['[secret DEPLOY_KEY]'] });
    expect(secretRedactor({})('anything')).toBe('anything');
  });
});

describe('secret redactor: printed forms', () => {
  const value = 'ghp_Secret+Value/0123456789';
  const redact = secretRedactor({ TOKEN: value });
  const bytes = Buffer.from(value);
  const wrap = (text: string, width: number) => text.replace(new RegExp(`(.{${width}})`, 'g'), '$1\n');

  // Each case: how it is printed, and how many bytes of something else are encoded with the value (their characters stay).
  it.each([
    ['hex', bytes.toString('hex'), 0],
    ['upper-case hex', bytes.toString('hex').toUpperCase(), 0],
    ['base64 after one byte', Buffer.concat([Buffer.from('x'), bytes]).toString('base64'), 1],
    ['base64 after two bytes', Buffer.concat([Buffer.from('xy'), bytes]).toString('base64'), 2],
    ['npm _auth / Docker auth: base64("user:" + token)', Buffer.from(`user:${value}`).toString('base64'), 5],
    ['url-safe base64 at an offset', Buffer.from(`u:${value}`).toString('base64url'), 2],
    ['base64 wrapped at 76 columns', wrap(Buffer.from(`${'x'.repeat(50)}${value}`).toString('base64'), 76), 50],
    ['base64 wrapped at 64 columns with CRLF', wrap(Buffer.from(`user:${value}`).toString('base64'), 64).replace(/\n/g, '\r\n'), 5],
    ['hex wrapped at 16 columns', wrap(bytes.toString('hex'), 16), 0],
    ['URL-encoded', encodeURIComponent(value), 0],
    ['URL-encoded with lower-case escapes', encodeURIComponent(value).replace(/%[0-9A-F]{2}/g, (p) => p.toLowerCase()), 0],
    ['every byte percent-encoded', [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join(''), 0],
    ['reversed', [...value].reverse().join(''), 0],
    ['JSON-escaped', JSON.stringify(value).slice(1, -1), 0],
  ])('finds the %s form', (_name, printed, before) => {
    const out = redact(`before ${printed} after`).replace(/\s/g, '');
    expect(out).toContain('[secretTOKEN]');
    // What is left is the other bytes' characters, at most one that mixes their bits with the value's, and 4 edge bits and padding at the end.
    const left = out.replace('before', '').replace('after', '').replace('[secretTOKEN]', '');
    expect(left.length).toBeLessThanOrEqual(Math.ceil((before * 4) / 3) + 3);
  });
});

describe('secret stream redactor', () => {
  const value = 'npm_TopSecret0123456789';
  const secrets = { NPM_TOKEN: value, OTHER: 'another-secret-value' };
  const make = secretStreamRedactor(secrets)!;
  const printed = [
    `token ${value}\n`,
    `hex ${Buffer.from(value).toString('hex')}\n`,
    `auth ${Buffer.from(`user:${value}`).toString('base64')}\n`,
    `wrapped ${Buffer.from(`ab${value}`)
      .toString('base64')
      .replace(/(.{8})/g, '$1\n')}\n`,
    'héllo wörld, no secret here ✓\n',
  ].join('');
  const whole = Buffer.from(printed);

  function through(chunks: Buffer[]): string {
    const r = make();
    return Buffer.concat([...chunks.map((c) => r.write(c)), r.end()]).toString('utf8');
  }

  it('gives the same result however the output is cut into chunks, split forms included', () => {
    const once = secretRedactor(secrets)(printed);
    expect(once).not.toContain('TopSecret');
    expect(through([whole])).toBe(once);
    for (let cut = 1; cut < whole.length; cut++) expect(through([whole.subarray(0, cut), whole.subarray(cut)])).toBe(once);
    expect(through([...whole].map((b) => Buffer.from([b])))).toBe(once);
  });

  it('is redacted before the head and tail are cut, so a secret across the cut leaks no half', () => {
    for (const at of [4090, 4096 - value.length / 2, 4096]) {
      const capture = new OutputCapture(4096, 4096, make());
      capture.write(Buffer.from(`${'x'.repeat(at)}${value}${'y'.repeat(10_000)}`));
      const text = capture.text();
      expect(text).not.toContain(value.slice(0, 8));
      expect(text).not.toContain(value.slice(-8));
      const tailOnly = new OutputCapture(0, 4096, make());
      for (const chunk of [`${'x'.repeat(1000)}${value.slice(0, 10)}`, `${value.slice(10)}${'y'.repeat(4096 - 5)}`]) tailOnly.write(Buffer.from(chunk));
      expect(tailOnly.text()).not.toContain(value.slice(-8));
    }
  });

  it('is absent without secrets', () => {
    expect(secretStreamRedactor({})).toBeUndefined();
  });
});
