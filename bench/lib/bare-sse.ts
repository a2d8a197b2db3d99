// The floor of an assistant answer: a bare HTTP handler that does what docent must do before and while streaming
// (open the stream, store a new thread while it retrieves passages, stream the model through the AI SDK) and writes each text delta as an SSE frame,
// with no auth, limits, validation or encoder in between.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client as EsClient } from '@elastic/elasticsearch';
import { streamText, type LanguageModel } from 'ai';
import type { Db } from 'mongodb';
import { ThreadStore } from '../../src/assistant/threads';
import { retrieveChunks } from '../../src/search/docs-index';
import type { Embedder } from '../../src/search/embedder';

export interface BareSse {
  url: string;
  close(): Promise<void>;
}

export async function startBareSse(deps: { db: Db; es: EsClient; indexPrefix: string; embedder?: () => Promise<Embedder>; model: LanguageModel }): Promise<BareSse> {
  const threads = new ThreadStore(deps.db);
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const { domain, question, retrieve } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { domain: string; question: string; retrieve: boolean };
    // The stream opens before the setup, as docent's does, so that a reader sees it at once.
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    if (retrieve) {
      await Promise.all([threads.insert(threads.draft(domain, 'anonymous', [])), retrieveChunks(deps, { domain, query: question, pageSize: 5 })]);
    }
    // A failed model call ends the stream with an error frame, as docent's does, instead of leaving it open.
    let failure: unknown;
    const result = streamText({
      model: deps.model,
      prompt: question,
      maxRetries: 0,
      onError: ({ error }) => {
        failure = error;
      },
    });
    for await (const delta of result.textStream) {
      if (!res.write(`data: ${JSON.stringify({ type: 'text-delta', id: 'text-0', delta })}\n\n`)) await new Promise((r) => res.once('drain', r));
    }
    if (failure) res.write(`data: ${JSON.stringify({ type: 'error', errorText: String((failure as Error).message ?? failure) })}\n\n`);
    res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export interface StreamTiming {
  /** From sending the request to the first byte of answer text. */
  firstTextMs: number;
  /** Arrival time (ms since the request) of each text delta, in order. */
  deltaTimes: number[];
}

/**
 * POSTs and reads the stream, timing text deltas as the client receives them: v2/SSE frames `"type":"text-delta"`,
 * v1 lines `0:`. Deltas that arrive in one read share its arrival time.
 */
export async function readStream(url: string, init: { headers: Record<string, string>; body: string }, format: 'v2' | 'v1'): Promise<StreamTiming> {
  const t0 = performance.now();
  // A stream that stalls (a wedged dependency) fails its block after a minute instead of holding up the run.
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...init.headers }, body: init.body, signal: AbortSignal.timeout(60_000) });
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${(await res.text()).slice(0, 200)}`);
  const decoder = new TextDecoder();
  const deltaTimes: number[] = [];
  let carry = '';
  const sep = format === 'v2' ? '\n\n' : '\n';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    const now = performance.now() - t0;
    carry += decoder.decode(chunk, { stream: true });
    const parts = carry.split(sep);
    carry = parts.pop()!;
    for (const p of parts) {
      if (format === 'v2' ? p.startsWith('data: {"type":"text-delta"') : p.startsWith('0:')) deltaTimes.push(now);
      else if (format === 'v2' ? p.startsWith('data: {"type":"error"') : p.startsWith('3:')) throw new Error(`stream error: ${p}`);
    }
  }
  if (deltaTimes.length === 0) throw new Error('the stream carried no text');
  return { firstTextMs: deltaTimes[0]!, deltaTimes };
}
