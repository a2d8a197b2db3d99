// Rows of the results table, its Markdown form, and the JSON written next to it.
export interface Row {
  bench: string;
  /** What this row measured, e.g. `REST c=8`. */
  case: string;
  /** The median over block pairs of subject/baseline (or of subject-baseline where the target is a difference). */
  ratio: string;
  target: string;
  /** Whether the goal in `target` held; null only for a row whose target is "reported" (no goal). */
  met: boolean | null;
  /** Why a goal row could not be judged on its figures (it is then not met): shown beside its "no". */
  unmeasured?: string;
  subject: string;
  baseline: string;
  note?: string;
}

/**
 * One measurement of a scaling benchmark at one load: what lib/charts.ts plots. `series` names the line (e.g.
 * `docent`, `floor`), `load` is the x value in the chart's `loadLabel` unit (concurrent callers, open streams,
 * passages, pages in flight …); `throughput` (in the chart's `throughputLabel` unit) and `p99Ms` are the y values
 * of its two panels, either may be absent.
 */
export interface ScalePoint {
  series: string;
  load: number;
  throughput?: number;
  p99Ms?: number;
}

/** The points of one chart: written as `<report>-<bench>-<id>.svg` beside the Markdown report and linked from it. */
export interface ScaleChart {
  /** File-name part, `[a-z0-9-]+`, unique within its benchmark. */
  id: string;
  title: string;
  /** The x axis, e.g. `concurrent searches`. */
  loadLabel: string;
  /** The left panel's y axis, e.g. `searches/s`. */
  throughputLabel: string;
  points: ScalePoint[];
  /** Log scale for the x axis (loads spanning decades, such as 1 … 1,000 streams). */
  logLoad?: boolean;
}

export interface BenchResult {
  name: string;
  rows: Row[];
  seconds: number;
  notes: string[];
  /** Scaling data points, one chart each (the results JSON keeps them, so charts can be redrawn from it). */
  charts?: ScaleChart[];
  error?: string;
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function markdownTable(results: BenchResult[]): string {
  const lines = ['| benchmark | case | median ratio (subject vs floor) | target | met | subject (absolute) | floor (absolute) |', '|---|---|---|---|---|---|---|'];
  for (const r of results) {
    if (r.error) lines.push(`| ${r.name} | — | failed to run | | | ${cell(r.error)} | |`);
    for (const row of r.rows) {
      const met = row.met === null ? '—' : row.met ? 'yes' : row.unmeasured ? `**no**: ${row.unmeasured}` : '**no**';
      lines.push(`| ${row.bench} | ${cell(row.case)} | **${cell(row.ratio)}** | ${cell(row.target)} | ${met} | ${cell(row.subject)} | ${cell(row.baseline)} |`);
    }
  }
  return lines.join('\n');
}

export function markdownNotes(results: BenchResult[]): string {
  const out: string[] = [];
  for (const r of results) {
    const notes = [...r.notes, ...r.rows.filter((x) => x.note).map((x) => `${x.case}: ${x.note}`)];
    if (notes.length) out.push(`- **${r.name}** (${r.seconds.toFixed(0)} s): ${notes.join(' ')}`);
    else out.push(`- **${r.name}** (${r.seconds.toFixed(0)} s)`);
  }
  return out.join('\n');
}
