import { existsSync, realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import * as ort from 'onnxruntime-node';
import type { DocChunk } from '../docs/chunk';

// all-MiniLM-L6-v2 was trained on inputs of up to 256 word pieces; longer passages are cut, keeping [SEP] last.
const maxTokens = 256;
// Passages of similar length go through the model together, so padding costs little.
const batchSize = 16;

/** The model files the installer (infra/stack.sh install model) puts in a model folder. */
export const modelFiles = { model: 'model.onnx', tokenizer: 'tokenizer.json' } as const;

export class EmbeddingModelMissingError extends Error {
  override name = 'EmbeddingModelMissingError';
}

/**
 * A sentence-embedding model (all-MiniLM-L6-v2, int8 ONNX) run in-process with onnxruntime: unit-length vectors whose
 * dot product says how close two texts are in meaning, so "out of date" finds the page about `npm outdated`.
 */
export class Embedder {
  private constructor(
    private readonly session: ort.InferenceSession,
    private readonly tokenizer: Tokenizer,
    /** Names the model and its version; indexes record it so that a different model rebuilds them. */
    readonly modelId: string,
    readonly dims: number,
  ) {}

  static async load(dir: string): Promise<Embedder> {
    assertModelFiles(dir);
    const [session, tokenizerJson] = await Promise.all([
      ort.InferenceSession.create(path.join(dir, modelFiles.model), { graphOptimizationLevel: 'all' }),
      readFile(path.join(dir, modelFiles.tokenizer), 'utf8'),
    ]);
    const tokenizer = new Tokenizer(JSON.parse(tokenizerJson), {});
    const probe = new Embedder(session, tokenizer, path.basename(realpathSync(dir)), 0);
    const [v] = await probe.embed(['docent']);
    return new Embedder(session, tokenizer, probe.modelId, v!.length);
  }

  /** The vector of a search question (this model embeds questions and passages alike). */
  async embedQuery(text: string): Promise<Float32Array> {
    const [v] = await this.embed([text]);
    return v!;
  }

  /** Vectors of many texts, in their order; `onBatch` reports progress (for activity heartbeats). */
  async embedMany(texts: string[], onBatch?: (done: number) => void): Promise<Float32Array[]> {
    const order = texts.map((_, i) => i).sort((a, b) => texts[a]!.length - texts[b]!.length);
    const out = new Array<Float32Array>(texts.length);
    for (let i = 0; i < order.length; i += batchSize) {
      const idx = order.slice(i, i + batchSize);
      const vectors = await this.embed(idx.map((k) => texts[k]!));
      idx.forEach((k, j) => (out[k] = vectors[j]!));
      onBatch?.(Math.min(i + batchSize, order.length));
    }
    return out;
  }

  private async embed(texts: string[]): Promise<Float32Array[]> {
    const encoded = texts.map((t): number[] => {
      const ids: number[] = this.tokenizer.encode(t).ids;
      return ids.length <= maxTokens ? ids : [...ids.slice(0, maxTokens - 1), ids[ids.length - 1]!];
    });
    const rows = encoded.length;
    const width = Math.max(...encoded.map((e) => e.length));
    const ids = new BigInt64Array(rows * width);
    const mask = new BigInt64Array(rows * width);
    encoded.forEach((e, r) => e.forEach((id, c) => ((ids[r * width + c] = BigInt(id)), (mask[r * width + c] = 1n))));
    const shape = [rows, width];
    const out = await this.session.run({
      input_ids: new ort.Tensor('int64', ids, shape),
      attention_mask: new ort.Tensor('int64', mask, shape),
      token_type_ids: new ort.Tensor('int64', new BigInt64Array(rows * width), shape),
    });
    const hidden = out.last_hidden_state!;
    const data = hidden.data as Float32Array;
    const dims = hidden.dims[2]!;
    // Mean over the real (unpadded) tokens, then unit length: the pooling this model was trained with.
    return encoded.map((e, r) => {
      const v = new Float32Array(dims);
      for (let c = 0; c < e.length; c++) {
        const at = (r * width + c) * dims;
        for (let d = 0; d < dims; d++) v[d]! += data[at + d]!;
      }
      let norm = 0;
      for (let d = 0; d < dims; d++) norm += v[d]! * v[d]!;
      norm = Math.sqrt(norm) || 1;
      for (let d = 0; d < dims; d++) v[d]! /= norm;
      return v;
    });
  }
}

/** What a passage's vector is made from: the page's title and description say what the words below are about. */
export function embeddingText(c: Pick<DocChunk, 'title' | 'description' | 'headings' | 'text'>): string {
  const page = c.description ? `${c.title}: ${c.description}.` : `${c.title}.`;
  const section = c.headings.length ? ` ${c.headings.join(' - ')}:` : '';
  return `${page}${section} ${c.text}`;
}

/**
 * Loads the model on first use and shares it; undefined when embeddings are off. A missing model folder is reported
 * at once, so a gateway or worker without its model fails at start instead of on the first question.
 */
export function embedderLoader(dir: string | undefined): (() => Promise<Embedder>) | undefined {
  if (!dir) return undefined;
  assertModelFiles(dir);
  let loading: Promise<Embedder> | undefined;
  return () =>
    (loading ??= Embedder.load(dir).catch((err: unknown) => {
      loading = undefined;
      throw err;
    }));
}

function assertModelFiles(dir: string): void {
  if (existsSync(path.join(dir, modelFiles.model)) && existsSync(path.join(dir, modelFiles.tokenizer))) return;
  throw new EmbeddingModelMissingError(
    `no embedding model in ${dir}: run \`npm run stack -- install model\`, set DOCENT_EMBEDDING_MODEL_DIR, or set DOCENT_EMBEDDINGS=off`,
  );
}
