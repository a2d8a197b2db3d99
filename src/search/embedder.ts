import { createHash, randomBytes } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DocChunk } from '../docs/chunk';
import { emptyQueueStats, ModelThreads, type ModelQueueStats } from './model-threads';

/** The model files the installer (infra/stack.sh install model) puts in a model folder. */
export const modelFiles = { model: 'model.onnx', tokenizer: 'tokenizer.json' } as const;

export class EmbeddingModelMissingError extends Error {
  override name = 'EmbeddingModelMissingError';
}

export interface EmbedderOptions {
  /** Model threads (sessions in worker threads); 0: one per core this process may use. */
  threads?: number;
  /** Passages per message to a model thread: a question waits for at most one such batch. */
  batch?: number;
  /** A folder of vectors by text hash shared by every process on the host (DOCENT_EMBEDDING_CACHE_DIR), if any. */
  cacheDir?: string;
}

/**
 * A sentence-embedding model (all-MiniLM-L6-v2, int8 ONNX) run in-process with onnxruntime: unit-length vectors whose
 * dot product says how close two texts are in meaning, so "out of date" finds the page about `npm outdated`. The
 * sessions run in worker threads (model-threads.ts), so the event loop keeps serving sockets while passages embed.
 */
export class Embedder {
  /** The model threads, once asked for; `running` once they answered, `closed` refuses a start after close(). */
  private threads?: Promise<ModelThreads>;
  private running?: ModelThreads;
  private closed = false;

  private constructor(
    private readonly start: () => Promise<ModelThreads>,
    /** Names the model and its version; indexes record it so that a different model rebuilds them. */
    readonly modelId: string,
    readonly dims: number,
    private readonly batch: number,
    /** Model threads when started: the pool's size, and the lanes `embedMany` keeps busy. */
    readonly threadCount: number,
    private readonly cacheDir?: string,
    started?: ModelThreads,
  ) {
    if (started) [this.running, this.threads] = [started, Promise.resolve(started)];
  }

  /**
   * `threads` 1 suits a gateway embedding small questions under load; 0 (all cores) suits bulk ingestion. With a vector
   * cache that already knows the model's width, the model threads start on the first text the cache misses: a process
   * whose texts are all cached never loads the model (about 0.3 s of CPU per thread).
   */
  static async load(dir: string, options: EmbedderOptions = {}): Promise<Embedder> {
    assertModelFiles(dir);
    const count = options.threads || os.availableParallelism();
    const start = () => ModelThreads.start(path.join(dir, modelFiles.model), path.join(dir, modelFiles.tokenizer), count);
    const modelId = path.basename(realpathSync(dir));
    const batch = Math.max(1, options.batch ?? 4);
    const cacheDir = options.cacheDir && path.join(options.cacheDir, modelId);
    const knownDims = cacheDir ? await readDims(cacheDir) : undefined;
    if (knownDims) return new Embedder(start, modelId, knownDims, batch, count, cacheDir);
    const threads = await start();
    const [probe] = await threads.embed(['docent'], 'question');
    if (cacheDir) await writeDims(cacheDir, probe!.length);
    return new Embedder(start, modelId, probe!.length, batch, count, cacheDir, threads);
  }

  /** The vector of a search question (this model embeds questions and passages alike), ahead of any passage batch. */
  async embedQuery(text: string): Promise<Float32Array> {
    return (await this.embedQueries([text]))[0]!;
  }

  /** A question and its hints, in one turn ahead of any passage batch. */
  embedQueries(texts: string[]): Promise<Float32Array[]> {
    return this.cached(texts, async (missing) => (await this.model()).embed(missing, 'question'));
  }

  /**
   * Vectors of many texts, in their order, in batches over every model thread; `onProgress` reports how many are done
   * (for activity heartbeats). At most one batch per thread and one more wait at a time, so memory stays bounded and
   * a question arriving meanwhile finds at most one batch ahead of it on each thread. An aborted `signal` (a cancelled
   * ingest, a worker shutting down) starts no further batch.
   */
  async embedMany(texts: string[], onProgress?: (done: number) => void, signal?: AbortSignal): Promise<Float32Array[]> {
    const out = new Array<Float32Array>(texts.length);
    let next = 0;
    let done = 0;
    const lane = async () => {
      while (next < texts.length) {
        signal?.throwIfAborted();
        const start = next;
        next = Math.min(texts.length, next + this.batch);
        const vectors = await this.cached(texts.slice(start, next), async (missing) => (await this.model()).embed(missing, 'passages'));
        for (const [j, v] of vectors.entries()) out[start + j] = v;
        done += vectors.length;
        onProgress?.(done);
      }
    };
    await Promise.all(Array.from({ length: this.threadCount + 1 }, lane));
    return out;
  }

  /** The queue in front of the model threads (whether questions kept their priority); all zero before they start. */
  queueStats(): ModelQueueStats {
    return this.running?.queueStats() ?? emptyQueueStats();
  }

  async close(): Promise<void> {
    this.closed = true;
    await (await this.threads?.catch(() => undefined))?.close();
  }

  /** The model threads, started by the first text the cache misses; a start that failed is tried again by the next. */
  private model(): Promise<ModelThreads> {
    if (this.closed) return Promise.reject(new Error('the embedding model threads are closed'));
    this.threads ??= this.start().then(
      (threads) => (this.running = threads),
      (err: unknown) => {
        this.threads = undefined;
        throw err;
      },
    );
    return this.threads;
  }

  // A text gets the same vector alone (one text per inference), so a vector stored under the text's hash is the one it
  // would get; only questions embedded together in a burst (model-threads.ts) differ from it, by a cosine under 0.02.
  private async cached(texts: string[], embed: (missing: string[]) => Promise<Float32Array[]>): Promise<Float32Array[]> {
    if (!this.cacheDir) return embed(texts);
    const files = texts.map((t) => path.join(this.cacheDir!, createHash('sha256').update(t).digest('hex')));
    const stored = await Promise.all(files.map((f) => readFile(f).catch(() => undefined)));
    const out: Array<Float32Array | undefined> = stored.map((b) => (b?.byteLength === this.dims * 4 ? new Float32Array(b.buffer, b.byteOffset, this.dims).slice() : undefined));
    const missing = out.flatMap((v, i) => (v ? [] : [i]));
    if (missing.length === 0) return out as Float32Array[];
    const fresh = await embed(missing.map((i) => texts[i]!));
    await mkdir(this.cacheDir, { recursive: true });
    for (const [j, i] of missing.entries()) {
      out[i] = fresh[j]!;
      await writeWhole(files[i]!, Buffer.from(fresh[j]!.buffer, fresh[j]!.byteOffset, fresh[j]!.byteLength));
    }
    return out as Float32Array[];
  }
}

/** What a passage's vector is made from: the page's title and description say what the words below are about. */
export function embeddingText(c: Pick<DocChunk, 'title' | 'description' | 'headings' | 'text'>): string {
  const page = c.description ? `${c.title}: ${c.description}.` : `${c.title}.`;
  const section = c.headings.length ? ` ${c.headings.join(' - ')}:` : '';
  return `${page}${section} ${c.text}`;
}

/** The model on first use, shared; `close()` ends its threads if it was loaded. */
export interface EmbedderLoader {
  (): Promise<Embedder>;
  close(): Promise<void>;
}

/**
 * Loads the model on first use and shares it; undefined when embeddings are off. A missing model folder is reported
 * at once, so a gateway or worker without its model fails at start instead of on the first question.
 */
export function embedderLoader(dir: string | undefined, options: EmbedderOptions = { threads: 1 }): EmbedderLoader | undefined {
  if (!dir) return undefined;
  assertModelFiles(dir);
  let loading: Promise<Embedder> | undefined;
  const load = () =>
    (loading ??= Embedder.load(dir, options).catch((err: unknown) => {
      loading = undefined;
      throw err;
    }));
  // A stopped gateway or worker in a process that goes on (tests, `docent` commands) would keep the model's threads.
  const close = async () => {
    const loaded = await loading?.catch(() => undefined);
    loading = undefined;
    await loaded?.close();
  };
  return Object.assign(load, { close });
}

function assertModelFiles(dir: string): void {
  if (existsSync(path.join(dir, modelFiles.model)) && existsSync(path.join(dir, modelFiles.tokenizer))) return;
  throw new EmbeddingModelMissingError(`no embedding model in ${dir}: run \`npm run stack -- install model\`, set DOCENT_EMBEDDING_MODEL_DIR, or set DOCENT_EMBEDDINGS=off`);
}

// The model's width, kept beside its vectors: an Embedder that finds it needs no model thread until a text misses.
const dimsFile = (cacheDir: string) => path.join(cacheDir, 'dims');

async function readDims(cacheDir: string): Promise<number | undefined> {
  const n = Number((await readFile(dimsFile(cacheDir), 'utf8').catch(() => '')).trim());
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

async function writeDims(cacheDir: string, dims: number): Promise<void> {
  await mkdir(cacheDir, { recursive: true });
  await writeWhole(dimsFile(cacheDir), `${dims}\n`);
}

/** Written aside, then renamed: a reader in another process sees the whole file or none. */
async function writeWhole(file: string, data: string | Buffer): Promise<void> {
  const partial = `${file}.${randomBytes(4).toString('hex')}`;
  await writeFile(partial, data);
  await rename(partial, file);
}
