// Whether a goal row is met, as pure functions of what its blocks measured: a row that could not be measured is not
// met (never "not judged"), a failed request is counted and shown, and each comparison is one the floor would fail.
import type { Block } from './blocks';
import type { Row } from './report';
import { meetsScaledFloor, percentile } from './stats';

/** A goal row's verdict and, when it is not met for want of a measurement, why. */
export interface Judged {
  met: boolean;
  /** Why the row could not be judged on its figures (then `met` is false); shown in the row. */
  unmeasured?: string;
}

/** A row's `met` and `unmeasured` fields from a verdict. */
export const judgedRow = (j: Judged): Pick<Row, 'met' | 'unmeasured'> => (j.unmeasured ? { met: j.met, unmeasured: j.unmeasured } : { met: j.met });

/** Requests of these blocks that failed, as a row shows them: `2 of 150 failed`, or an empty string when none did. */
export function failedShown(blocks: readonly Block[]): string {
  const failed = blocks.reduce((n, b) => n + b.errors, 0);
  const tried = blocks.reduce((n, b) => n + b.ops + b.errors, 0);
  return failed ? `${failed} of ${tried} failed` : '';
}

/**
 * `subject p50 ≤ factor × floor p50 + plusMs` over the block pairs, and not one request failed on either side: a
 * failed search is left out of the latencies, so a side that dropped some would be timed on the ones that worked.
 */
export function scaledFloorGoal(subject: readonly Block[], floor: readonly Block[], factor: number, plusMs: number): Judged {
  const failed = [failedShown(subject) && `docent: ${failedShown(subject)}`, failedShown(floor) && `floor: ${failedShown(floor)}`].filter(Boolean);
  if (failed.length) return { met: false, unmeasured: `requests failed (${failed.join('; ')})` };
  if (subject.length === 0 || subject.length !== floor.length) return { met: false, unmeasured: 'no block pairs' };
  const p50 = (bs: readonly Block[]) => bs.map((b) => percentile(b.latencies, 50));
  return { met: meetsScaledFloor(p50(subject), p50(floor), factor, plusMs) };
}

/** One block of n streams: how many completed, failed, and were open at once. */
export interface StreamsOutcome {
  completed: number;
  errors: number;
  maxOpen: number;
}

/**
 * The largest load's row: every one of `n` streams open at once and every one completed, in every block. A block
 * whose streams never were all open at once measured fewer live streams than the row names.
 */
export function allStreamsGoal(n: number, blocks: readonly StreamsOutcome[]): Judged {
  if (blocks.length === 0) return { met: false, unmeasured: 'no block ran' };
  const short = blocks.filter((b) => b.maxOpen < n);
  if (short.length) return { met: false, unmeasured: `at most ${Math.max(...short.map((b) => b.maxOpen))} of ${n} open at once` };
  return { met: blocks.every((b) => b.completed === n && b.errors === 0) };
}

/**
 * The gap row: docent adds at most `maxAddedMs` to the floor's p99 inter-token gap, every stream of both sides
 * completed. When the floor's own p99 gap is `floorLimitMs` or more, the machine set the gap: the row is not met.
 */
export function addedGapGoal(args: {
  n: number;
  addedMs: number;
  floorP99Ms: number;
  floorLimitMs: number;
  maxAddedMs: number;
  subject: readonly StreamsOutcome[];
  floor: readonly StreamsOutcome[];
}): Judged {
  const incomplete = [...args.subject, ...args.floor].filter((b) => b.completed < args.n || b.errors > 0);
  if (incomplete.length) return { met: false, unmeasured: `not every stream completed (${incomplete.map((b) => `${b.completed} of ${args.n}`).join(', ')})` };
  if (!Number.isFinite(args.floorP99Ms) || args.floorP99Ms >= args.floorLimitMs)
    return { met: false, unmeasured: `the floor's own p99 gap was ${args.floorP99Ms.toFixed(0)} ms (≥ ${args.floorLimitMs} ms: the machine set the pace)` };
  return { met: Number.isFinite(args.addedMs) && args.addedMs <= args.maxAddedMs };
}

/** The limit row: `limit` streams held open past their setup, then the next one of the key answered a clear 429. */
export function heldAtLimitGoal(args: { limit: number; open: number; pastSetup: number; extraStatus: number; extraHasCode: boolean }): Judged {
  if (args.open < args.limit) return { met: false, unmeasured: `not at the limit: ${args.open} of ${args.limit} opened` };
  if (args.pastSetup < args.limit) return { met: false, unmeasured: `${args.pastSetup} of ${args.limit} held streams got past their setup` };
  return { met: args.extraStatus === 429 && args.extraHasCode };
}

/** One tenant-fairness block, as both sides measure it: how many of A's jobs had finished when B's job finished. */
export interface FairnessBlock {
  finishedBeforeFinish: number;
}

/** A tenth of the backlog (at least one job): B's job should finish before that many of A's have. */
export const fairnessBar = (backlogJobs: number) => Math.max(1, Math.ceil(backlogJobs * 0.1));

/**
 * Fairness makes the difference: with it on, B's job finished before a tenth of A's backlog had, in every block; with
 * it off (the floor, measured the same way), it did not, in every block. A floor that also meets the bar means the
 * benchmark cannot tell fairness from its absence, and the row is not met.
 */
export function fairnessGoal(backlogJobs: number, on: readonly FairnessBlock[], off: readonly FairnessBlock[]): Judged {
  const bar = fairnessBar(backlogJobs);
  if (on.length === 0 || off.length === 0) return { met: false, unmeasured: 'a side ran no block' };
  if (off.some((b) => b.finishedBeforeFinish < bar)) return { met: false, unmeasured: `with fairness off B also finished before ${bar} of A's jobs: the bar does not tell on from off` };
  return { met: on.every((b) => b.finishedBeforeFinish < bar) };
}

/**
 * docent's ingest at ≥ 0.8× the model's own speed, against a floor that kept the machine's cores busy (CPU over wall
 * time ≥ 0.9 per core): a floor that ran on fewer cores than docent would flatter it.
 */
export function ingestFloorGoal(args: { ratio: number; floorCpuPerWall: number; cores: number }): Judged {
  if (args.floorCpuPerWall < 0.9 * args.cores) return { met: false, unmeasured: `the floor kept ${args.floorCpuPerWall.toFixed(2)} of ${args.cores} cores busy` };
  return { met: args.ratio >= 0.8 };
}
