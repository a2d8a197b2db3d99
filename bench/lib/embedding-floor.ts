// The model's own speed on this machine, as strong as it can be made: one single-threaded onnxruntime session per core,
// each on its own worker thread (session.run blocks the thread that calls it), fed with no queue, no I/O and no indexing.
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { modelFiles } from '../../src/search/embedder';
import { embeddingThreadFile } from '../../src/search/model-threads';

export interface FloorRun {
  /** `one text a run` (what docent's ingest does) or `padded runs of N`. */
  mode: string;
  seconds: number;
  /** CPU time of the whole process (every thread) over wall time: about the number of cores kept busy. */
  cpuPerWall: number;
  vectors: Float32Array[];
}

interface Reply {
  id: number;
  vectors?: Float32Array[];
  error?: string;
}

async function startThreads(modelDir: string, count: number): Promise<Worker[]> {
  const workerData = { modelFile: path.join(modelDir, modelFiles.model), tokenizerFile: path.join(modelDir, modelFiles.tokenizer) };
  const threads = Array.from({ length: count }, () => new Worker(embeddingThreadFile, { workerData }));
  await Promise.all(threads.map((t) => new Promise((resolve, reject) => t.once('message', resolve).once('error', reject))));
  return threads;
}

/** Each thread embeds its share of `texts` in messages of `batch`, two in flight, so no thread waits for the next. */
async function embedAll(threads: Worker[], texts: string[], batch: number, together: boolean): Promise<Float32Array[]> {
  const out: Float32Array[] = new Array(texts.length);
  let next = 0;
  const share = (thread: Worker) =>
    new Promise<void>((resolve, reject) => {
      const sent = new Map<number, number>();
      const send = () => {
        if (next >= texts.length) return;
        const first = next;
        next += batch;
        sent.set(first, Math.min(batch, texts.length - first));
        thread.postMessage({ id: first, texts: texts.slice(first, first + batch), together });
      };
      thread.on('message', (m: Reply) => {
        if (m.error || !m.vectors) return reject(new Error(m.error ?? 'no vectors'));
        for (const [i, v] of m.vectors.entries()) out[m.id + i] = v;
        sent.delete(m.id);
        send();
        if (sent.size === 0) resolve();
      });
      send();
      send();
      if (sent.size === 0) resolve();
    });
  await Promise.all(threads.map(share));
  for (const t of threads) t.removeAllListeners('message');
  return out;
}

/**
 * The floor in both shapes docent could use, one text a run and padded runs of `batch` texts, each timed with the CPU
 * it used; the caller takes the faster. Threads start (and load the model) before the clock does.
 */
export async function embeddingFloor(modelDir: string, texts: string[], batch: number, cores = os.availableParallelism()): Promise<FloorRun[]> {
  const threads = await startThreads(modelDir, cores);
  try {
    const runs: FloorRun[] = [];
    for (const [mode, size, together] of [
      ['one text a run', batch, false],
      [`padded runs of ${batch}`, batch, true],
    ] as const) {
      const cpu = process.cpuUsage();
      const start = performance.now();
      const vectors = await embedAll(threads, texts, size, together);
      const seconds = (performance.now() - start) / 1000;
      const used = process.cpuUsage(cpu);
      runs.push({ mode, seconds, cpuPerWall: (used.user + used.system) / 1e6 / seconds, vectors });
    }
    return runs;
  } finally {
    // Closed, not terminated: a thread ends after its run (terminating one inside a run aborts onnxruntime).
    await Promise.all(threads.map((t) => new Promise((resolve) => t.once('exit', resolve).postMessage({ close: true }))));
  }
}
