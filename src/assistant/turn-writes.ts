/**
 * Turn writes, which an answer's stream waits for only so long (turnWaitMs in src/assistant/service.ts). Per thread
 * they run in order, and a follow-up read in this process waits for them (`settled`); across threads at most
 * `concurrency` run at once, so that a burst of answers ending together (1,000 streams) neither takes every pooled
 * database connection from the questions still being set up nor makes FerretDB's one writer slower with contending
 * updates (measured in docs/decisions/2026-11-27-thousand-streams.md).
 */
export class TurnWrites {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly byThread = new Map<string, Promise<void>>();

  constructor(private readonly concurrency: number) {}

  /** Queues `write` behind the thread's earlier ones; what it returns settles (never rejects) once it has run. */
  add(threadId: string, write: () => Promise<unknown>): Promise<void> {
    const done = this.settled(threadId)
      .then(() => this.inSlot(write))
      .then(
        () => undefined,
        () => undefined,
      );
    this.byThread.set(threadId, done);
    void done.then(() => {
      if (this.byThread.get(threadId) === done) this.byThread.delete(threadId);
    });
    return done;
  }

  /** Resolves once every write queued for the thread so far has run. */
  settled(threadId: string): Promise<void> {
    return this.byThread.get(threadId) ?? Promise.resolve();
  }

  /** Resolves once every write queued so far has run. */
  async drain(): Promise<void> {
    await Promise.all(this.byThread.values());
  }

  /** Threads with a write waiting or running (for metrics and tests). */
  get pending(): number {
    return this.byThread.size;
  }

  private async inSlot(write: () => Promise<unknown>): Promise<unknown> {
    // A finished write hands its slot straight to the next one waiting, so no newcomer slips in between.
    if (this.running < this.concurrency) this.running++;
    else await new Promise<void>((r) => this.waiting.push(r));
    try {
      return await write();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

/** Resolves once `p` settles or `ms` have passed, whichever is first: the caps on waiting for turn writes. */
export async function settledWithin(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p.catch(() => undefined), new Promise((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}
