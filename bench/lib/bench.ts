import type { ModelProcess } from './model';
import type { Row, ScaleChart } from './report';

/** What a benchmark gets from the runner. */
export interface BenchContext {
  /** The scripted model in its own process, shared by the benchmarks that need one. */
  model(): Promise<ModelProcess>;
  /** Progress lines. */
  log(line: string): void;
}

export interface BenchOutput {
  rows: Row[];
  /** Scale-downs, caveats and explanations that belong under the table. */
  notes: string[];
  /** Scaling benchmarks: throughput and p99 against load, drawn as SVG beside the report (see report.ts, ScalePoint). */
  charts?: ScaleChart[];
}

export interface Benchmark {
  name: string;
  /** One line: subject vs floor. */
  summary: string;
  run(ctx: BenchContext): Promise<BenchOutput>;
}
