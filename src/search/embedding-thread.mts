// One model thread of ModelThreads (model-threads.ts): its own onnxruntime session and tokenizer, off the event loop.
// ESM and package imports only, so node runs it as it is from src/ (tests) and from dist/ (compiled to .mjs).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { Tokenizer } from '@huggingface/tokenizers';
import * as ort from 'onnxruntime-node';

// all-MiniLM-L6-v2 was trained on inputs of up to 256 word pieces; longer passages are cut, keeping [SEP] last.
const maxTokens = 256;

interface ThreadData {
  modelFile: string;
  tokenizerFile: string;
}

interface BatchRequest {
  id: number;
  texts: string[];
  /** One run for all texts (questions queued together); otherwise one run per text. */
  together?: boolean;
}

const { modelFile, tokenizerFile } = workerData as ThreadData;
// One intra-op thread: the pool's threads are the parallelism, and a session never competes with its neighbours.
const session = await ort.InferenceSession.create(path.resolve(modelFile), { graphOptimizationLevel: 'all', intraOpNumThreads: 1, interOpNumThreads: 1 });
const tokenizer = new Tokenizer(JSON.parse(readFileSync(tokenizerFile, 'utf8')), {});

// One text per run: the int8 model quantizes activations per run, so a batched run would let neighbours and padding
// shift a text's vector (cosine 0.99 instead of 1); alone, a text always gets the same vector (the cache relies on it).
// Questions queued together are the exception (model-threads.ts): one padded run for all of them, because under a
// burst of questions the run count, not the few tokens, is what each question waits for.
async function infer(texts: string[]): Promise<Float32Array[]> {
  const ids = texts.map((text) => {
    const all: number[] = tokenizer.encode(text).ids;
    return all.length > maxTokens ? [...all.slice(0, maxTokens - 1), all[all.length - 1]!] : all;
  });
  const width = Math.max(...ids.map((x) => x.length));
  const shape = [texts.length, width];
  const inputIds = new BigInt64Array(texts.length * width);
  const mask = new BigInt64Array(texts.length * width);
  for (const [row, x] of ids.entries()) {
    for (const [t, id] of x.entries()) {
      inputIds[row * width + t] = BigInt(id);
      mask[row * width + t] = 1n;
    }
  }
  const out = await session.run({
    input_ids: new ort.Tensor('int64', inputIds, shape),
    attention_mask: new ort.Tensor('int64', mask, shape),
    token_type_ids: new ort.Tensor('int64', new BigInt64Array(texts.length * width), shape),
  });
  const hidden = out.last_hidden_state!;
  const data = hidden.data as Float32Array;
  const dims = hidden.dims[2]!;
  // Mean over each text's own tokens (padding left out), then unit length: the pooling this model was trained with.
  return ids.map((x, row) => {
    const v = new Float32Array(dims);
    for (let t = 0; t < x.length; t++) for (let d = 0; d < dims; d++) v[d]! += data[(row * width + t) * dims + d]!;
    const norm = Math.hypot(...v) || 1;
    return v.map((y) => y / norm);
  });
}

async function answer({ id, texts, together }: BatchRequest): Promise<void> {
  try {
    const vectors: Float32Array[] = together ? await infer(texts) : [];
    if (!together) for (const t of texts) vectors.push(...(await infer([t])));
    parentPort!.postMessage(
      { id, vectors },
      vectors.map((v) => v.buffer as ArrayBuffer),
    );
  } catch (err) {
    parentPort!.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
}

// One message at a time, in order: a close waits for the run before it, then the session is released and the thread
// ends on its own (model-threads.ts never terminates one inside a run).
let queue = Promise.resolve();
parentPort!.on('message', (m: BatchRequest | { close: true }) => {
  queue = queue.then(async () => {
    if (!('close' in m)) return answer(m);
    await session.release();
    parentPort!.close();
  });
});
parentPort!.postMessage({ ready: true });
