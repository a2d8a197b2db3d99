import { encodeDataStream } from '../../src/assistant/data-stream';
import type { AnswerEvent } from '../../src/assistant/events';
import { encodeUiMessageStream } from '../../src/assistant/ui-message-stream';
import { AppError } from '../../src/errors';

async function* answer(failAfterText = false): AsyncGenerator<AnswerEvent> {
  yield { type: 'source', source: { id: '1', url: 'https://d.example/commands/npm-ci#description', title: 'npm-ci › Description', path: 'commands/npm-ci' } };
  yield { type: 'text', delta: 'Use ' };
  if (failAfterText) throw new Error('socket hang up at 10.0.0.7');
  yield { type: 'text', delta: '`npm ci` [1].' };
  yield { type: 'finish', finishReason: 'stop', usage: { promptTokens: 12, completionTokens: 3 } };
}

const collect = async (it: AsyncIterable<string>) => {
  let s = '';
  for await (const c of it) s += c;
  return s;
};
const ids = { threadId: 'thr_abc', messageId: 'msg_1' };

describe('UI message stream (v2)', () => {
  it('frames start, step, sources, text and a finish carrying the thread id, then [DONE]', async () => {
    const out = await collect(encodeUiMessageStream(answer(), ids));
    const frames = out.split('\n\n').filter(Boolean);
    expect(frames.at(-1)).toBe('data: [DONE]');
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.replace(/^data: /, '')));
    expect(chunks.map((c) => c.type)).toEqual(['start', 'start-step', 'source-url', 'text-start', 'text-delta', 'text-delta', 'text-end', 'finish-step', 'finish']);
    expect(chunks[0]).toEqual({ type: 'start', messageId: 'msg_1' });
    expect(chunks[2]).toEqual({
      type: 'source-url',
      sourceId: '1',
      url: 'https://d.example/commands/npm-ci#description',
      title: 'npm-ci › Description',
      providerMetadata: { docent: { path: 'commands/npm-ci' } },
    });
    expect(chunks.at(-1)).toEqual({ type: 'finish', threadId: 'thr_abc', messageMetadata: { threadId: 'thr_abc' } });
    expect(out).not.toContain('finishReason');
  });

  it("puts the question's searchId in the start chunk as message metadata", async () => {
    const out = await collect(encodeUiMessageStream(answer(), { ...ids, searchId: 'srch_1' }));
    expect(JSON.parse(out.split('\n\n')[0]!.replace(/^data: /, ''))).toEqual({ type: 'start', messageId: 'msg_1', messageMetadata: { searchId: 'srch_1' } });
  });

  it('reports a late failure as an error chunk without internal details', async () => {
    const out = await collect(encodeUiMessageStream(answer(true), ids));
    const chunks = out
      .split('\n\n')
      .filter((f) => f && f !== 'data: [DONE]')
      .map((f) => JSON.parse(f.slice(6)));
    expect(chunks.at(-1)).toEqual({ type: 'error', errorText: 'internal error' });
    expect(out.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(out).not.toContain('10.0.0.7');
  });

  it('shows an AppError message as it is', async () => {
    // biome-ignore lint/correctness/useYield: an answer that fails before its first event
    async function* failing(): AsyncGenerator<AnswerEvent> {
      throw new AppError('unavailable', 'the model provider is unavailable');
    }
    expect(await collect(encodeUiMessageStream(failing(), ids))).toContain('"errorText":"the model provider is unavailable"');
  });
});

describe('data stream (v1)', () => {
  it('writes f, h, 0, 8, e and a last d line with the thread id', async () => {
    const out = await collect(encodeDataStream(answer(), ids));
    const lines = out.trimEnd().split('\n');
    expect(lines.map((l) => l.slice(0, 2))).toEqual(['f:', 'h:', '0:', '0:', '8:', 'e:', 'd:']);
    expect(lines[0]).toBe('f:{"messageId":"msg_1"}');
    expect(JSON.parse(lines[1]!.slice(2))).toEqual({
      sourceType: 'url',
      id: '1',
      url: 'https://d.example/commands/npm-ci#description',
      title: 'npm-ci › Description',
      providerMetadata: { docent: { path: 'commands/npm-ci' } },
    });
    expect(lines[4]).toBe('8:[{"threadId":"thr_abc"}]');
    const annotated = (await collect(encodeDataStream(answer(), { ...ids, searchId: 'srch_1' }))).split('\n')[4];
    expect(annotated).toBe('8:[{"threadId":"thr_abc","searchId":"srch_1"}]');
    expect(JSON.parse(lines[6]!.slice(2))).toEqual({ finishReason: 'stop', usage: { promptTokens: 12, completionTokens: 3 }, threadId: 'thr_abc' });
  });

  it('ends with a 3: line when the answer fails after streaming began', async () => {
    const lines = (await collect(encodeDataStream(answer(true), ids))).trimEnd().split('\n');
    expect(lines.at(-1)).toBe('3:"internal error"');
    expect(lines.map((l) => l.slice(0, 2))).toEqual(['f:', 'h:', '0:', '3:']);
  });
});
