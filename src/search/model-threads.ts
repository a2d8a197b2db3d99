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

/** What a thread is running: one passage batch, or every question that was waiting (their texts in one run). */
interface Run {
  jobs: Job[];
  lane: Lane;
  startedAt: number;
}

interface Slot {
  worker: Worker;
  job?: Run;
}

/** Texts of waiting questions embedded in one run: a burst of questions costs one inference, not one each. */
export const maxQuestionTexts = 32;

/** What the queue in front of the model threads did: a question that waited behind a queued passage batch shows here. */
export interface ModelQueueStats {
  questions: number;
  /** Inferences the questions took: fewer than `questions` when waiting questions were embedded together. */
  questionRuns: number;
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

/** The stats of a queue that has seen nothing yet. */
export function emptyQueueStats(): ModelQueueStats {
  return {
    questions: 0,
    questionRuns: 0,
    questionWaitMaxMs: 0,
    passageBatches: 0,
    passageBatchMaxMs: 0,
    passageBatchesAheadOfQuestions: 0,
    questionsBehindQueuedBatches: 0,
  };
}

// From src/ (tests, node strips the types) the thread is the .mts file; from dist/ its compiled .mjs.
/** One model thread's script (embedding-thread.mts): also what the ingest benchmark's floor drives directly. */
export const embeddingThreadFile = path.join(__dirname, __filename.endsWith('.ts') ? 'embedding-thread.mts' : 'embedding-thread.mjs');

/** How long a closing thread may take to finish its run before it is terminated regardless. */
const closeGraceMs = 30_000;

/** Asks the thread to exit once its run is done (embedding-thread.mts); terminates it only if it does not in time. */
async function stopThread(worker: Worker): Promise<void> {
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.postMessage({ close: true });
  const late = setTimeout(() => void worker.terminate(), closeGraceMs);
  try {
    await exited;
  } finally {
    clearTimeout(late);
  }
}

/**
 * Sessions of the embedding model in worker threads: inferences never block the event loop (onnxruntime-node runs
 * them synchronously on the calling thread), `count` of them run at once, and questions go before passage batches.
 */
export class ModelThreads {
  private readonly queues: Record<Lane, Job[]> = { question: [], passages: [] };
  private readonly stats = emptyQueueStats();
  private closed = false;

  private constructor(private readonly slots: Slot[]) {
    for (const slot of slots) {
      slot.worker.on('message', (m: { vectors?: Float32Array[]; error?: string }) => this.finished(slot, m));
      slot.worker.on('error', (err) => this.failed(slot, err));
      slot.worker.unref();
    }
  }

  static async start(modelFile: string, tokenizerFile: string, count: number): Promise<ModelThreads> {
    const workers = Array.from({ length: Math.max(1, count) }, () => new Worker(embeddingThreadFile, { workerData: { modelFile, tokenizerFile } }));
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

  /** The vectors of `texts`, in order, on one thread: one after another, or with other waiting questions in one run. */
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

  /**
   * Fails what waits, lets each thread finish the run it is in, release its session and exit. A thread is never
   * terminated inside a run: onnxruntime aborts the whole process (SIGABRT) when its thread goes mid-inference.
   */
  async close(): Promise<void> {
    this.closed = true;
    const closed = new Error('the embedding model threads are closed');
    for (const job of [...this.queues.question.splice(0), ...this.queues.passages.splice(0)]) job.reject(closed);
    await Promise.all(this.slots.map((s) => stopThread(s.worker)));
  }

  private dispatch(): void {
    if (this.closed) return;
    for (const slot of this.slots) {
      if (slot.job) continue;
      const jobs = this.takeQuestions();
      const first = jobs[0] ?? this.queues.passages.shift();
      if (!first) return;
      const startedAt = performance.now();
      if (first.lane === 'question') {
        this.stats.questions += jobs.length;
        this.stats.questionRuns++;
        for (const job of jobs) this.stats.questionWaitMaxMs = Math.max(this.stats.questionWaitMaxMs, startedAt - job.queuedAt);
      } else if (this.queues.question.length) this.stats.passageBatchesAheadOfQuestions++;
      const run = { jobs: jobs.length ? jobs : [first], lane: first.lane, startedAt };
      slot.job = run;
      slot.worker.ref();
      // A lone question keeps one run per text, so its vector is the one it gets alone (and in the vector cache).
      slot.worker.postMessage({ id: 0, texts: run.jobs.flatMap((j) => j.texts), together: run.jobs.length > 1 });
    }
  }

  /** Every waiting question, in arrival order, up to `maxQuestionTexts` texts (at least the first, whatever its size). */
  private takeQuestions(): Job[] {
    const taken: Job[] = [];
    let texts = 0;
    while (this.queues.question.length) {
      const next = this.queues.question[0]!;
      if (taken.length && texts + next.texts.length > maxQuestionTexts) break;
      taken.push(this.queues.question.shift()!);
      texts += next.texts.length;
    }
    return taken;
  }

  private finished(slot: Slot, m: { vectors?: Float32Array[]; error?: string }): void {
    const run = slot.job;
    if (!run) return;
    slot.job = undefined;
    slot.worker.unref();
    if (run.lane === 'passages') {
      this.stats.passageBatches++;
      this.stats.passageBatchMaxMs = Math.max(this.stats.passageBatchMaxMs, performance.now() - run.startedAt);
    }
    let at = 0;
    for (const job of run.jobs) {
      if (m.vectors) job.resolve(m.vectors.slice(at, at + job.texts.length));
      else job.reject(new Error(`embedding failed: ${m.error ?? 'unknown error'}`));
      at += job.texts.length;
    }
    this.dispatch();
  }

  // A thread that died (out of memory, a native fault) fails its batch; the pool goes on with the others.
  private failed(slot: Slot, err: Error): void {
    for (const job of slot.job?.jobs ?? []) job.reject(err);
    slot.job = undefined;
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    if (this.slots.length === 0) {
      this.closed = true;
      for (const job of [...this.queues.question.splice(0), ...this.queues.passages.splice(0)]) job.reject(err);
    } else this.dispatch();
  }
}
