// Percentiles and ratios over latency samples (milliseconds).

/** Nearest-rank percentile of the samples (p in 0..100); NaN when there are none. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export const median = (xs: readonly number[]) => percentile(xs, 50);

/** Median of subject[i] / baseline[i] over the alternating block pairs: each pair ran under the same machine load. */
export function medianRatio(subject: readonly number[], baseline: readonly number[]): number {
  const ratios = subject.map((s, i) => s / baseline[i]!).filter((r) => Number.isFinite(r));
  return median(ratios);
}

/** Median of subject[i] - baseline[i] over the block pairs. */
export function medianDifference(subject: readonly number[], baseline: readonly number[]): number {
  return median(subject.map((s, i) => s - baseline[i]!));
}

/** Whether `subject ≤ factor × floor + plusMs` holds for the median block pair (the same pairing as the ratio). */
export function meetsScaledFloor(subject: readonly number[], floor: readonly number[], factor: number, plusMs: number): boolean {
  return median(subject.map((s, i) => s - factor * floor[i]! - plusMs)) <= 0;
}

export const fmtMs = (x: number) => (Number.isFinite(x) ? `${x < 10 ? x.toFixed(2) : x.toFixed(1)} ms` : 'n/a');
export const fmtRatio = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : 'n/a');
export const fmtRate = (x: number, unit: string) => (Number.isFinite(x) ? `${x >= 100 ? x.toFixed(0) : x.toFixed(1)} ${unit}` : 'n/a');
