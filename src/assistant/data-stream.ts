import { publicError } from '../errors';
import type { AnswerEvent, AnswerUsage } from './events';

/** Response headers of the v1 stream (AI SDK 4 data stream protocol). */
export function dataStreamHeaders(threadId: string): Record<string, string> {
  return {
    'content-type': 'text/plain; charset=utf-8',
    'x-vercel-ai-data-stream': 'v1',
    'x-thread-id': threadId,
    'x-accel-buffering': 'no',
  };
}

const line = (code: string, value: unknown) => `${code}:${JSON.stringify(value)}\n`;

/**
 * Encodes an answer as an AI SDK 4 data stream: `f:` start, `h:` one per source (its page path in
 * `providerMetadata.docent.path`), `0:` text, `8:` the thread id and the searchId as a message annotation (reaches
 * `onFinish`), `e:` step finish and last `d:` with the thread id. Late failures become `3:`.
 */
export async function* encodeDataStream(events: AsyncIterable<AnswerEvent>, ids: { threadId: string; messageId: string; searchId?: string }): AsyncGenerator<string> {
  yield line('f', { messageId: ids.messageId });
  let finishReason: string = 'stop';
  let usage: AnswerUsage = { promptTokens: 0, completionTokens: 0 };
  try {
    for await (const e of events) {
      if (e.type === 'source') {
        yield line('h', { sourceType: 'url', id: e.source.id, url: e.source.url, title: e.source.title, providerMetadata: { docent: { path: e.source.path } } });
      } else if (e.type === 'text') {
        if (e.delta) yield line('0', e.delta);
      } else {
        finishReason = e.finishReason;
        usage = e.usage;
      }
    }
  } catch (err) {
    yield line('3', publicError(err).message);
    return;
  }
  yield line('8', [{ threadId: ids.threadId, ...(ids.searchId && { searchId: ids.searchId }) }]);
  yield line('e', { finishReason, usage, isContinued: false });
  yield line('d', { finishReason, usage, threadId: ids.threadId });
}
