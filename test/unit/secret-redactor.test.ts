import { redactDeep, secretRedactor } from '../../src/secrets/redactor';

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
