import { createUIMessageStream, JsonToSseTransformStream } from 'ai';
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

/**
 * Encodes an answer as an AI SDK UI message stream (SSE) with the SDK's own stream and framing. Only chunk types that
 * every 5.x/6.x/7.x client accepts; `finish` carries no finishReason (5.0.0–5.0.91 reject it) but carries the thread id
 * twice: for raw readers and as message metadata for `useChat`. `start` carries the searchId as message metadata (the
 * SDK merges it with the finish's), and each source its page path as `providerMetadata.docent.path`, so a client can
 * report a click on a source. A failure after the first frame becomes an `error` chunk with the public message only.
 */
export function encodeUiMessageStream(events: AsyncIterable<AnswerEvent>, ids: { threadId: string; messageId: string; searchId?: string }): ReadableStream<string> {
  const textId = 'text-0';
  const stream = createUIMessageStream({
    onError: (err) => publicError(err).message,
    async execute({ writer }) {
      writer.write({ type: 'start', messageId: ids.messageId, ...(ids.searchId && { messageMetadata: { searchId: ids.searchId } }) });
      writer.write({ type: 'start-step' });
      let textOpen = false;
      for await (const e of events) {
        if (e.type === 'source') {
          writer.write({ type: 'source-url', sourceId: e.source.id, url: e.source.url, title: e.source.title, providerMetadata: { docent: { path: e.source.path } } });
        } else if (e.type === 'text' && e.delta) {
          if (!textOpen) writer.write({ type: 'text-start', id: textId });
          textOpen = true;
          writer.write({ type: 'text-delta', id: textId, delta: e.delta });
        }
      }
      if (textOpen) writer.write({ type: 'text-end', id: textId });
      writer.write({ type: 'finish-step' });
      // `threadId` beside the SDK's fields is docent's promise to raw readers; clients ignore fields they do not know.
      const finish = { type: 'finish' as const, threadId: ids.threadId, messageMetadata: { threadId: ids.threadId } };
      writer.write(finish);
    },
  });
  return stream.pipeThrough(new JsonToSseTransformStream());
}
