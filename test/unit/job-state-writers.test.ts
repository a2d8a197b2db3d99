import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

// Issue 25: the job ledger is the only writer of a job's state. A source-level check of who writes the jobs, turns
// and events collections (and the archive markers that decide an archive): reads may live elsewhere, writes may not.

const root = path.join(__dirname, '../..');
/** The ledger and the stores it owns (and constructs): the only files allowed to write the collections. */
const ledgerFiles = ['src/jobs/ledger.ts', 'src/jobs/job-store.ts', 'src/jobs/job-turns.ts', 'src/jobs/job-events.ts', 'src/jobs/job-state.ts'];
const stores = ['JobStore', 'TurnStore', 'JobEventStore', 'JobState'];

const collectionNames = /\bcollection(?:<[^>]*>)?\(\s*(?:'(?:jobs|job_turns|job_events|job_archive_markers)'|archiveMarkerCollection)\s*\)/;
const writes = /\.(insertOne|insertMany|updateOne|updateMany|replaceOne|findOneAndUpdate|findOneAndReplace|findOneAndDelete|deleteOne|deleteMany|bulkWrite|drop)\(/;

function sources(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.posix.join(dir, e.name);
    if (e.isDirectory()) return rel === 'src/gen' ? [] : sources(rel);
    return e.name.endsWith('.ts') ? [rel] : [];
  });
}

const product = [...sources('src'), ...sources('activities'), ...sources('workflows')];
const text = (file: string) => readFileSync(path.join(root, file), 'utf8');

it('only the ledger and its stores write the jobs, job_turns and job_events collections', () => {
  const touching = product.filter((f) => collectionNames.test(text(f)));
  const writers = touching.filter((f) => writes.test(text(f)));
  expect(writers.filter((f) => !ledgerFiles.includes(f))).toEqual([]);
  // The check sees the real writers: each of the ledger's stores names its collection and writes it.
  expect(writers.sort()).toEqual(ledgerFiles.filter((f) => f !== 'src/jobs/ledger.ts').sort());
});

it('only the ledger constructs the stores, so every write goes through its verbs', () => {
  const constructs = new RegExp(`\\bnew (${stores.join('|')})\\(`);
  const constructing = product.filter((f) => constructs.test(text(f)));
  expect(constructing.filter((f) => !ledgerFiles.includes(f))).toEqual([]);
  expect(constructing).toContain('src/jobs/ledger.ts');
});
