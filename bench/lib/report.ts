// Rows of the results table, its Markdown form, and the JSON written next to it.
export interface Row {
  bench: string;
  /** What this row measured, e.g. `REST c=8`. */
  case: string;
  /** The median over block pairs of subject/baseline (or of subject-baseline where the target is a difference). */
  ratio: string;
  target: string;
  met: boolean | null;
  subject: string;
  baseline: string;
  note?: string;
}

export interface BenchResult {
  name: string;
  rows: Row[];
  seconds: number;
  notes: string[];
  /** Data points for charts (bench/lib/bench.ts `Series`), in the JSON only. */
  series?: Array<{ name: string; x: string; y: string; points: Array<[number, number]> }>;
  error?: string;
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function markdownTable(results: BenchResult[]): string {
  const lines = ['| benchmark | case | median ratio (subject vs floor) | target | met | subject (absolute) | floor (absolute) |', '|---|---|---|---|---|---|---|'];
  for (const r of results) {
    if (r.error) lines.push(`| ${r.name} | — | failed to run | | | ${cell(r.error)} | |`);
    for (const row of r.rows) {
      const met = row.met === null ? '—' : row.met ? 'yes' : '**no**';
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
