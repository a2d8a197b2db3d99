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
}

const { modelFile, tokenizerFile } = workerData as ThreadData;
// One intra-op thread: the pool's threads are the parallelism, and a session never competes with its neighbours.
const session = await ort.InferenceSession.create(path.resolve(modelFile), { graphOptimizationLevel: 'all', intraOpNumThreads: 1, interOpNumThreads: 1 });
const tokenizer = new Tokenizer(JSON.parse(readFileSync(tokenizerFile, 'utf8')), {});

// One text per run: the int8 model quantizes activations per run, so a batched run would let neighbours and padding
// shift a text's vector (cosine 0.99 instead of 1); alone, a text always gets the same vector (the cache relies on it).
async function infer(text: string): Promise<Float32Array> {
  let ids: number[] = tokenizer.encode(text).ids;
  if (ids.length > maxTokens) ids = [...ids.slice(0, maxTokens - 1), ids[ids.length - 1]!];
  const shape = [1, ids.length];
  const out = await session.run({
    input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), shape),
    attention_mask: new ort.Tensor('int64', new BigInt64Array(ids.length).fill(1n), shape),
    token_type_ids: new ort.Tensor('int64', new BigInt64Array(ids.length), shape),
  });
  const hidden = out.last_hidden_state!;
  const data = hidden.data as Float32Array;
  const dims = hidden.dims[2]!;
  // Mean over the tokens, then unit length: the pooling this model was trained with.
  const v = new Float32Array(dims);
  for (let t = 0; t < ids.length; t++) for (let d = 0; d < dims; d++) v[d]! += data[t * dims + d]!;
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

parentPort!.on('message', async ({ id, texts }: BatchRequest) => {
  try {
    const vectors: Float32Array[] = [];
    for (const t of texts) vectors.push(await infer(t));
    parentPort!.postMessage(
      { id, vectors },
      vectors.map((v) => v.buffer as ArrayBuffer),
    );
  } catch (err) {
    parentPort!.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
});
parentPort!.postMessage({ ready: true });
