import { publicError } from '../errors';
import type { AnswerEvent } from './events';

/** Response headers of the v2 stream (AI SDK 5+ `useChat` default transport). */
export function uiMessageStreamHeaders(threadId: string): Record<string, string> {
  return {
    'content-type': 'text/event-stream',
    'x-vercel-ai-ui-message-stream': 'v1',
    'x-thread-id': threadId,
    'x-accel-buffering': 'no',
  };
}

const frame = (chunk: object) => `data: ${JSON.stringify(chunk)}\n\n`;

/**
 * Encodes an answer as an AI SDK UI message stream (SSE). Only chunk types that every 5.x/6.x/7.x client accepts;
 * `finish` carries no finishReason (5.0.0–5.0.91 reject it) but carries the thread id twice: for raw readers and
 * as message metadata for `useChat`. A failure after the first frame becomes an `error` chunk.
 */
export async function* encodeUiMessageStream(events: AsyncIterable<AnswerEvent>, ids: { threadId: string; messageId: string }): AsyncGenerator<string> {
  yield frame({ type: 'start', messageId: ids.messageId });
  yield frame({ type: 'start-step' });
  const textId = 'text-0';
  let textOpen = false;
  try {
    for await (const e of events) {
      if (e.type === 'source') {
        yield frame({ type: 'source-url', sourceId: e.source.id, url: e.source.url, title: e.source.title });
      } else if (e.type === 'text') {
        if (!e.delta) continue;
        if (!textOpen) {
          textOpen = true;
          yield frame({ type: 'text-start', id: textId });
        }
        yield frame({ type: 'text-delta', id: textId, delta: e.delta });
      }
    }
    if (textOpen) yield frame({ type: 'text-end', id: textId });
    yield frame({ type: 'finish-step' });
    yield frame({ type: 'finish', threadId: ids.threadId, messageMetadata: { threadId: ids.threadId } });
  } catch (err) {
    yield frame({ type: 'error', errorText: publicError(err).message });
  }
  yield 'data: [DONE]\n\n';
}
