// docs-resync: a one-page change to the npm docs fixture synced from its repository (clone, diff by blob, copy the
// unchanged passages, embed one page, flip the alias) vs a full ingest of the same docs into a fresh domain.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../src/config';
import { runDocsIngest } from '../src/cli/docs-ingest';
import { followDocs, syncDocsNow, unfollowDocs, type DocsSyncSchedules } from '../src/docs/sync-schedule';
import { createEsClient } from '../src/search/es-client';
import { temporalConnectionOptions, temporalDataConverter } from '../src/temporal/connection';
import { startWorker } from '../test/support/docs';
import { startGitServer } from '../test/support/git-server';
import type { Benchmark } from './lib/bench';
import { alternate, type Block } from './lib/blocks';
import { benchEnv, deleteIndexes, runId } from './lib/stack';
import { fmtMs, fmtRatio, median, medianRatio } from './lib/stats';

const token = 'ghs_benchdocsresync0123456789';
// From dist/bench, where the benchmarks run.
const npmDocsFolder = path.resolve(__dirname, '../../test/fixtures/docs/npm');
const rounds = 3;
const changedPage = 'docs/commands/npm-ci.md';

async function filesUnder(root: string, dir = ''): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(path.join(root, dir), { withFileTypes: true })) {
    const rel = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory()) Object.assign(out, await filesUnder(root, rel));
    else if (e.isFile()) out[rel] = await readFile(path.join(root, rel), 'utf8');
  }
  return out;
}

const timed = async (work: () => Promise<unknown>): Promise<Block> => {
  const t = performance.now();
  await work();
  const ms = performance.now() - t;
  return { latencies: [ms], ops: 1, errors: 0, seconds: ms / 1000 };
};

export const docsResync: Benchmark = {
  name: 'docs-resync',
  summary: 'a one-page change to the npm docs synced from git vs a full ingest of the same docs',
  async run(ctx) {
    const run = runId();
    const git = await startGitServer(token);
    const config = loadConfig({ ...process.env, ...benchEnv(run), DOCENT_GITHUB_GIT_URL: git.url, DOCENT_GITHUB_TOKEN: token });
    const docs = await filesUnder(npmDocsFolder);
    await git.createRepo('npm', 'docs', Object.fromEntries(Object.entries(docs).map(([f, text]) => [`docs/${f}`, text])));
    const worker = await startWorker(config);
    const connection = await Connection.connect(temporalConnectionOptions(config.temporal));
    const s: DocsSyncSchedules = {
      temporal: new Client({ connection, namespace: config.temporal.namespace, dataConverter: temporalDataConverter(config.temporal) }),
      taskQueuePrefix: config.temporal.taskQueuePrefix,
      gitBaseUrl: git.url,
    };
    const domain = 'sync.npm.bench';
    let edits = 0;
    let fullDomains = 0;
    const reembedded: number[] = [];
    try {
      await followDocs(s, { domain, repository: 'npm/docs', ref: 'main', docsPath: 'docs', baseUrl: 'https://docs.npmjs.com' }, 24 * 3_600_000, { firstNow: false });
      ctx.log('first sync (full) of the followed repository');
      await syncDocsNow(s, domain);
      const r = await alternate({
        rounds,
        warmup: false,
        // Each full ingest goes to a fresh domain, so no earlier index lends it a vector.
        baseline: () => timed(() => runDocsIngest(config, { domain: `full-${++fullDomains}.npm.bench`, source: npmDocsFolder, baseUrl: 'https://docs.npmjs.com' }, () => undefined)),
        // The push is made before the clock starts: the figure is the sync alone.
        subject: async () => {
          await git.commitFiles('npm', 'docs', { [changedPage]: `${docs['commands/npm-ci.md']}\n\n## Benchmark edit ${++edits}\n\nThis paragraph changed in edit ${edits}.\n` });
          return timed(async () => {
            const result = await syncDocsNow(s, domain);
            reembedded.push(result.pagesReembedded);
          });
        },
      });
      const full = r.baseline.map((b) => b.latencies[0]!);
      const sync = r.subject.map((b) => b.latencies[0]!);
      const ratio = medianRatio(sync, full);
      ctx.log(`one-page re-sync vs full ingest: ${fmtRatio(ratio)}`);
      return {
        rows: [{ bench: 'docs-resync', case: 'one page of 91 changed', ratio: fmtRatio(ratio), target: '≤ 0.10×', met: ratio <= 0.1, subject: fmtMs(median(sync)), baseline: fmtMs(median(full)) }],
        notes: [
          `docs-resync: ${rounds} pairs; the subject is \`syncDocsNow\` after a push, to its result (schedule trigger, shallow clone over local smart HTTP, blob diff, one page embedded into the served index, alias filter moved, old passages deleted); pages re-embedded per sync: ${reembedded.join(', ')}. The floor is \`runDocsIngest\` of the same 91 pages into a fresh domain (every passage embedded).`,
        ],
      };
    } finally {
      await unfollowDocs(s, domain).catch(() => undefined);
      await connection.close();
      await worker.stop();
      const es = createEsClient(config.elasticsearch);
      await deleteIndexes(es, config.elasticsearch.indexPrefix);
      await es.close();
      await git.close();
    }
  },
};
