// `node dist/soak/check.js <runDir>`: checks a soak run's invariants from its history and its stores, prints each
// with its counterexamples and the run's counts, and exits 1 when one breaks. It reads snapshot.json when the harness
// wrote one, else the stores named in run.json (which must still be up).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { checkRun, runCounts, type Verdict } from './invariants';
import { parseHistory } from './lib/history';
import { readSnapshot, type RunLayout } from './lib/read-snapshot';
import type { Snapshot } from './lib/snapshot';

/** The report's text: one line per invariant, then up to `shown` counterexamples each. */
export function formatVerdicts(verdicts: Verdict[], shown = 20): string {
  const lines: string[] = [];
  for (const v of verdicts) {
    lines.push(`${v.holds ? 'HOLDS ' : 'BROKEN'}  ${v.name} (${v.checked} checked${v.holds ? '' : `, ${v.counterexamples.length} counterexample(s)`})`);
    for (const c of v.counterexamples.slice(0, shown)) lines.push(`          - ${c}`);
    if (v.counterexamples.length > shown) lines.push(`          … ${v.counterexamples.length - shown} more`);
  }
  return lines.join('\n');
}

export async function checkRunFolder(runDir: string): Promise<{ verdicts: Verdict[]; report: string }> {
  const history = parseHistory(readFileSync(path.join(runDir, 'history.jsonl'), 'utf8'));
  const snapshotFile = path.join(runDir, 'snapshot.json');
  let snapshot: Snapshot;
  if (existsSync(snapshotFile)) snapshot = JSON.parse(readFileSync(snapshotFile, 'utf8')) as Snapshot;
  else {
    snapshot = await readSnapshot(runDir, JSON.parse(readFileSync(path.join(runDir, 'run.json'), 'utf8')) as RunLayout);
    writeFileSync(snapshotFile, JSON.stringify(snapshot));
  }
  const verdicts = checkRun(history, snapshot);
  const report = `${JSON.stringify(runCounts(history, snapshot), null, 2)}\n${formatVerdicts(verdicts)}`;
  return { verdicts, report };
}

if (require.main === module) {
  const runDir = process.argv[2];
  if (!runDir) {
    console.error('usage: node dist/soak/check.js <runDir>');
    process.exit(2);
  }
  checkRunFolder(runDir).then(
    ({ verdicts, report }) => {
      console.log(report);
      process.exit(verdicts.every((v) => v.holds) ? 0 : 1);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(2);
    },
  );
}
