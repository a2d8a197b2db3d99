// Alternating baseline and subject blocks in one process: machine noise (other test suites on this 2-core box)
// then hits both sides of each pair alike, and the median of the per-pair ratios is the figure to read first.
import { percentile } from './stats';

/** What one block measured: per-operation latencies and how many operations finished in how long. */
export interface Block {
  latencies: number[];
  ops: number;
  errors: number;
  seconds: number;
}

export interface Alternated {
  baseline: Block[];
  subject: Block[];
}

/** Runs `rounds` pairs of blocks, baseline first then subject, after one unrecorded warm-up pair. */
export async function alternate(opts: { rounds: number; baseline: () => Promise<Block>; subject: () => Promise<Block>; warmup?: boolean }): Promise<Alternated> {
  if (opts.warmup !== false) {
    await opts.baseline();
    await opts.subject();
  }
  const out: Alternated = { baseline: [], subject: [] };
  for (let i = 0; i < opts.rounds; i++) {
    out.baseline.push(await opts.baseline());
    out.subject.push(await opts.subject());
  }
  return out;
}

/**
 * A closed loop of `concurrency` callers each repeating `op` until `ops` operations have started or `durationMs`
 * has passed. A failed operation is counted, not timed, and never stops the loop.
 */
export async function closedLoop(op: (i: number) => Promise<unknown>, opts: { concurrency: number; ops?: number; durationMs?: number }): Promise<Block> {
  const latencies: number[] = [];
  let started = 0;
  let errors = 0;
  let firstError: unknown;
  const t0 = performance.now();
  const deadline = opts.durationMs === undefined ? Infinity : t0 + opts.durationMs;
  const limit = opts.ops ?? Infinity;
  const caller = async () => {
    while (started < limit && performance.now() < deadline) {
      const i = started++;
      const t = performance.now();
      try {
        await op(i);
        latencies.push(performance.now() - t);
      } catch (err) {
        errors++;
        firstError ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, caller));
  const seconds = (performance.now() - t0) / 1000;
  if (errors > 0 && latencies.length === 0) throw firstError;
  if (firstError) console.warn(`  (${errors} failed operations in a block; first: ${String((firstError as Error)?.message ?? firstError)})`);
  return { latencies, ops: latencies.length, errors, seconds };
}

/** Block-level figures, one number per block, ready for medianRatio. */
export const p50s = (bs: Block[]) => bs.map((b) => percentile(b.latencies, 50));
export const p99s = (bs: Block[]) => bs.map((b) => percentile(b.latencies, 99));
export const rates = (bs: Block[]) => bs.map((b) => b.ops / b.seconds);
/** Percentile over every sample of every block of one side. */
export const pooled = (bs: Block[], p: number) =>
  percentile(
    bs.flatMap((b) => b.latencies),
    p,
  );
