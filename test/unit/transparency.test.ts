import { randomBytes } from 'node:crypto';
import { stepData } from '../../activities/agent-job/step-events';
import { costUsd } from '../../src/jobs/prices';
import { parseSse } from '../support/sse';
import { sseFrame } from '../../src/rest/job-event-stream';
import { SecretBox } from '../../src/crypto/secret-box';

describe('webhook secrets at rest', () => {
  const box = new SecretBox(randomBytes(32));

  it('seal to a value that does not contain the secret and opens back to it', () => {
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const sealed = box.seal(secret);
    expect(sealed).not.toContain(secret.slice(6));
    expect(box.seal(secret)).not.toBe(sealed); // a fresh IV each time
    expect(box.open(sealed)).toBe(secret);
  });

  it('refuse a sealed value that was changed, or opened with another key', () => {
    const sealed = box.seal('whsec_abc');
    const parts = sealed.split('.');
    parts[3] = Buffer.from('whsec_xyz').toString('base64url');
    expect(() => box.open(parts.join('.'))).toThrow();
    expect(() => new SecretBox(randomBytes(32)).open(sealed)).toThrow();
  });
});

describe('step events', () => {
  it('name the tool and the path or folder it touched', () => {
    expect(stepData({ toolName: 'write_file', input: { path: 'src/a.ts', content: 'SECRET CONTENT' } })).toEqual({ tool: 'write_file', path: 'src/a.ts' });
    expect(stepData({ toolName: 'edit_file', input: { path: 'README.md', old: 'x', new: 'SECRET' } })).toEqual({ tool: 'edit_file', path: 'README.md' });
    expect(stepData({ toolName: 'list_files', input: { folder: 'docs' } })).toEqual({ tool: 'list_files', path: 'docs' });
    expect(stepData({ toolName: 'run_command', input: { command: 'echo SECRET > out' } })).toEqual({ tool: 'run_command' });
    expect(stepData({ toolName: 'write_file', input: null })).toEqual({ tool: 'write_file' });
  });
});

describe('cost from the price table', () => {
  it('prices input and output tokens per million, and has no cost for a model without a price', () => {
    expect(costUsd({ m: { input: 2, output: 8 } }, 'm', { inputTokens: 1_000_000, outputTokens: 500_000 })).toBe(6);
    expect(costUsd({ m: { input: 2, output: 8 } }, 'other', { inputTokens: 10, outputTokens: 10 })).toBeUndefined();
  });
});

describe('SSE frames', () => {
  it('parse back to the event, with its id and type, whatever its data holds', () => {
    const event = { id: 7, type: 'step' as const, turn: 2, at: new Date(0).toISOString(), data: { tool: 'write_file', path: 'a\nb: c' } };
    const [parsed] = parseSse(sseFrame(event));
    expect(parsed).toMatchObject({ id: '7', event: 'step' });
    expect(JSON.parse(parsed!.data)).toEqual(event);
  });
});
