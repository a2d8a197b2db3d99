import { createHash, randomBytes } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import * as ort from 'onnxruntime-node';
import type { DocChunk } from '../docs/chunk';

// all-MiniLM-L6-v2 was trained on inputs of up to 256 word pieces; longer passages are cut, keeping [SEP] last.
const maxTokens = 256;

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
  /** The inference under way, if any: the next one starts after it (see run()). */
  private inferring: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly session: ort.InferenceSession,
    private readonly tokenizer: Tokenizer,
    /** Names the model and its version; indexes record it so that a different model rebuilds them. */
    readonly modelId: string,
    readonly dims: number,
    /** A folder of vectors by text hash shared by every process on the host (DOCENT_EMBEDDING_CACHE_DIR), if any. */
    private readonly cacheDir?: string,
  ) {}

  /** `threads` 1 suits a gateway embedding small questions under load; 0 (all cores) suits bulk ingestion. */
  static async load(dir: string, threads = 1, cacheDir?: string): Promise<Embedder> {
    assertModelFiles(dir);
    const [session, tokenizerJson] = await Promise.all([
      ort.InferenceSession.create(path.join(dir, modelFiles.model), { graphOptimizationLevel: 'all', intraOpNumThreads: threads, interOpNumThreads: 1 }),
      readFile(path.join(dir, modelFiles.tokenizer), 'utf8'),
    ]);
    const tokenizer = new Tokenizer(JSON.parse(tokenizerJson), {});
    const probe = new Embedder(session, tokenizer, path.basename(realpathSync(dir)), 0);
    const v = await probe.embed('docent');
    return new Embedder(session, tokenizer, probe.modelId, v.length, cacheDir && path.join(cacheDir, probe.modelId));
  }

  /** The vector of a search question (this model embeds questions and passages alike). */
  embedQuery(text: string): Promise<Float32Array> {
    return this.embed(text);
  }

  /** Vectors of many texts, in their order; `onProgress` reports how many are done (for activity heartbeats). */
  async embedMany(texts: string[], onProgress?: (done: number) => void): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (const t of texts) {
      out.push(await this.embed(t));
      if (out.length % 16 === 0 || out.length === texts.length) onProgress?.(out.length);
    }
    return out;
  }

  // A text always gets the same vector (see run()), so a vector stored under the text's hash is the one it would get.
  private async embed(text: string): Promise<Float32Array> {
    if (!this.cacheDir) return this.run(text);
    const file = path.join(this.cacheDir, createHash('sha256').update(text).digest('hex'));
    const stored = await readFile(file).catch(() => undefined);
    if (stored?.byteLength === this.dims * 4) return new Float32Array(stored.buffer, stored.byteOffset, this.dims).slice();
    const v = await this.run(text);
    await mkdir(this.cacheDir, { recursive: true });
    // Written aside, then renamed: a reader in another process sees the whole vector or none.
    const partial = `${file}.${randomBytes(4).toString('hex')}`;
    await writeFile(partial, Buffer.from(v.buffer, v.byteOffset, v.byteLength));
    await rename(partial, file);
    return v;
  }

  // onnxruntime-node runs each inference synchronously on the event loop (from a setImmediate), so inferences asked for
  // at once all ran in one turn of the loop: 100 questions stalled every open answer stream for 40-100 ms. One at a
  // time, each starts in a later turn and the sockets are served between two (bench/README.md, stream-throughput).
  private run(text: string): Promise<Float32Array> {
    const vector = this.inferring.then(() => this.infer(text));
    this.inferring = vector.catch(() => undefined);
    return vector;
  }

  // One text per run: the int8 model quantizes activations per run, so a batch would let neighbours and padding
  // shift a text's vector (cosine 0.99 instead of 1); alone, a text always gets the same vector, and it is no slower.
  private async infer(text: string): Promise<Float32Array> {
    let ids: number[] = this.tokenizer.encode(text).ids;
    if (ids.length > maxTokens) ids = [...ids.slice(0, maxTokens - 1), ids[ids.length - 1]!];
    const shape = [1, ids.length];
    const out = await this.session.run({
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
export function embedderLoader(dir: string | undefined, threads = 1, cacheDir?: string): (() => Promise<Embedder>) | undefined {
  if (!dir) return undefined;
  assertModelFiles(dir);
  let loading: Promise<Embedder> | undefined;
  return () =>
    (loading ??= Embedder.load(dir, threads, cacheDir).catch((err: unknown) => {
      loading = undefined;
      throw err;
    }));
}

function assertModelFiles(dir: string): void {
  if (existsSync(path.join(dir, modelFiles.model)) && existsSync(path.join(dir, modelFiles.tokenizer))) return;
  throw new EmbeddingModelMissingError(`no embedding model in ${dir}: run \`npm run stack -- install model\`, set DOCENT_EMBEDDING_MODEL_DIR, or set DOCENT_EMBEDDINGS=off`);
}
