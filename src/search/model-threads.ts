import path from 'node:path';
import { Worker } from 'node:worker_threads';

/** Questions are served before any waiting passage batch: an answer waits for at most the batch a thread is busy with. */
export type Lane = 'question' | 'passages';

interface Job {
  texts: string[];
  lane: Lane;
  queuedAt: number;
  resolve(vectors: Float32Array[]): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  job?: Job & { startedAt: number };
}

/** What the queue in front of the model threads did: a question that waited behind a queued passage batch shows here. */
export interface ModelQueueStats {
  questions: number;
  /** The longest a question waited for a free thread. */
  questionWaitMaxMs: number;
  passageBatches: number;
  /** The longest a passage batch held its thread: the most a question should ever wait. */
  passageBatchMaxMs: number;
  /** Passage batches given a thread while a question was waiting: 0 when questions keep their priority. */
  passageBatchesAheadOfQuestions: number;
  /** Questions that came while every thread was busy and passage batches waited: where the priority mattered. */
  questionsBehindQueuedBatches: number;
}

// From src/ (tests, node strips the types) the thread is the .mts file; from dist/ its compiled .mjs.
const threadFile = path.join(__dirname, __filename.endsWith('.ts') ? 'embedding-thread.mts' : 'embedding-thread.mjs');

/**
 * Sessions of the embedding model in worker threads: inferences never block the event loop (onnxruntime-node runs
 * them synchronously on the calling thread), `count` of them run at once, and questions go before passage batches.
 */
export class ModelThreads {
  private readonly queues: Record<Lane, Job[]> = { question: [], passages: [] };
  private readonly stats: ModelQueueStats = { questions: 0, questionWaitMaxMs: 0, passageBatches: 0, passageBatchMaxMs: 0, passageBatchesAheadOfQuestions: 0, questionsBehindQueuedBatches: 0 };
  private closed = false;

  private constructor(private readonly slots: Slot[]) {
    for (const slot of slots) {
      slot.worker.on('message', (m: { vectors?: Float32Array[]; error?: string }) => this.finished(slot, m));
      slot.worker.on('error', (err) => this.failed(slot, err));
      slot.worker.unref();
    }
  }

  static async start(modelFile: string, tokenizerFile: string, count: number): Promise<ModelThreads> {
    const workers = Array.from({ length: Math.max(1, count) }, () => new Worker(threadFile, { workerData: { modelFile, tokenizerFile } }));
    try {
      await Promise.all(
        workers.map(
          (w) =>
            new Promise<void>((resolve, reject) => {
              w.once('message', () => resolve());
              w.once('error', reject);
            }),
        ),
      );
    } catch (err) {
      await Promise.all(workers.map((w) => w.terminate()));
      throw err;
    }
    return new ModelThreads(workers.map((worker) => ({ worker })));
  }

  get size(): number {
    return this.slots.length;
  }

  /** The vectors of `texts`, in order, embedded one after another on one thread. */
  embed(texts: string[], lane: Lane): Promise<Float32Array[]> {
    if (this.closed) return Promise.reject(new Error('the embedding model threads are closed'));
    if (lane === 'question' && this.queues.passages.length && this.slots.every((s) => s.job)) this.stats.questionsBehindQueuedBatches++;
    return new Promise((resolve, reject) => {
      this.queues[lane].push({ texts, lane, queuedAt: performance.now(), resolve, reject });
      this.dispatch();
    });
  }

  queueStats(): ModelQueueStats {
    return { ...this.stats };
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (slot.job) continue;
      const job = this.queues.question.shift() ?? this.queues.passages.shift();
      if (!job) return;
      const startedAt = performance.now();
      if (job.lane === 'question') {
        this.stats.questions++;
        this.stats.questionWaitMaxMs = Math.max(this.stats.questionWaitMaxMs, startedAt - job.queuedAt);
      } else if (this.queues.question.length) this.stats.passageBatchesAheadOfQuestions++;
      slot.job = { ...job, startedAt };
      slot.worker.ref();
      slot.worker.postMessage({ id: 0, texts: job.texts });
    }
  }

  private finished(slot: Slot, m: { vectors?: Float32Array[]; error?: string }): void {
    const job = slot.job;
    if (!job) return;
    slot.job = undefined;
    slot.worker.unref();
    if (job.lane === 'passages') {
      this.stats.passageBatches++;
      this.stats.passageBatchMaxMs = Math.max(this.stats.passageBatchMaxMs, performance.now() - job.startedAt);
    }
    if (m.vectors) job.resolve(m.vectors);
    else job.reject(new Error(`embedding failed: ${m.error ?? 'unknown error'}`));
    this.dispatch();
  }

  // A thread that died (out of memory, a native fault) fails its batch; the pool goes on with the others.
  private failed(slot: Slot, err: Error): void {
    slot.job?.reject(err);
    slot.job = undefined;
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    if (this.slots.length === 0) {
      this.closed = true;
      for (const job of [...this.queues.question.splice(0), ...this.queues.passages.splice(0)]) job.reject(err);
    } else this.dispatch();
  }
}
