// docs-ingest-scale: a full ingest of 2,175 real pages (Debian's PostgreSQL, SQLite and git manuals as Markdown)
// from a repository over local smart HTTP, against the model's own speed: the same passages embedded by one
// single-threaded onnxruntime session per core, each on its own worker thread, with nothing else (bench/lib/embedding-floor.ts).
import { readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runDocsIngest } from '../src/cli/docs-ingest';
import { loadConfig } from '../src/config';
import { chunkPage, type DocChunk } from '../src/docs/chunk';
import { runningIndexingProgress } from '../src/docs/ingest-progress';
import { retrieveRanked } from '../src/search/docs-index';
import { type Embedder, embedderLoader, embeddingText } from '../src/search/embedder';
import { createEsClient } from '../src/search/es-client';
import { Client, Connection } from '@temporalio/client';
import { temporalConnectionOptions, temporalDataConverter } from '../src/temporal/connection';
import { docsIngestWorkflowId } from '../workflows/docs-ingest-contract';
import { startWorker } from '../test/support/docs';
import { startGitServer } from '../test/support/git-server';
import type { Benchmark } from './lib/bench';
import type { ScaleChart } from './lib/report';
import { debianDocsMarkdown } from './lib/debian-docs';
import { embeddingFloor } from './lib/embedding-floor';
import { ingestFloorGoal, judgedRow } from './lib/goals';
import { benchEnv, deleteIndexes, runId } from './lib/stack';
import { fmtMs, fmtRate, fmtRatio, percentile } from './lib/stats';

const token = 'ghs_benchingestscale0123456789';
const baseUrl = 'https://docs.bench.test';
const questions = ['how do I create an index concurrently', 'what does VACUUM FULL do', 'write-ahead log checkpoints', 'git rebase onto another branch', 'sqlite foreign key constraints'];

async function markdownFiles(root: string, dir = ''): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(path.join(root, dir), { withFileTypes: true })) {
    const rel = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory()) Object.assign(out, await markdownFiles(root, rel));
    else if (e.name.endsWith('.md')) out[rel] = await readFile(path.join(root, rel), 'utf8');
  }
  return out;
}

export const docsIngestScale: Benchmark = {
  name: 'docs-ingest-scale',
  summary: 'a full ingest of 2,175 real pages (git over local HTTP) vs the model alone embedding the same passages on every core (worker threads)',
  async run(ctx) {
    const run = runId();
    // No vector cache: every passage is embedded on both sides.
    const env = { ...process.env, ...benchEnv(run) };
    delete env.DOCENT_EMBEDDING_CACHE_DIR;
    const git = await startGitServer(token);
    const config = loadConfig({ ...env, DOCENT_GITHUB_GIT_URL: git.url, DOCENT_GITHUB_TOKEN: token });
    if (!config.embeddingModelDir) throw new Error('docs-ingest-scale needs the embedding model (DOCENT_EMBEDDINGS=on)');
    const es = createEsClient(config.elasticsearch);
    // Beside the stack's downloads (DOCENT_CACHE, infra/stack.sh).
    const corpus = await debianDocsMarkdown(process.env.DOCENT_CACHE ?? path.join(os.homedir(), '.cache', 'docent'), ctx.log);
    const files = await markdownFiles(corpus.root);
    const chunks: DocChunk[] = Object.entries(files).flatMap(([file, source]) => chunkPage(file, source, { baseUrl }));
    ctx.log(`${corpus.pages} pages, ${chunks.length} passages (${corpus.root})`);
    await git.createRepo('bench', 'manuals', Object.fromEntries(Object.entries(files).map(([f, text]) => [`docs/${f}`, text])));

    const load = embedderLoader(config.embeddingModelDir, { threads: config.embeddingThreads, batch: config.embeddingBatch })!;
    const worker = await startWorker(config, { embedder: load });
    const connection = await Connection.connect(temporalConnectionOptions(config.temporal));
    const client = new Client({ connection, namespace: config.temporal.namespace, dataConverter: temporalDataConverter(config.temporal) });
    let embedder: Embedder | undefined;
    try {
      // Floor: the passages on every core, one text a run and in padded runs, the faster of the two. Bulk indexing is
      // left out: docent's ingest overlaps it with embedding, so the model alone is what it is measured against.
      const floorRuns = await embeddingFloor(config.embeddingModelDir, chunks.map(embeddingText), config.embeddingBatch);
      for (const r of floorRuns) ctx.log(`floor, ${r.mode}: ${fmtRate(chunks.length / r.seconds, 'passages/s')} (${r.seconds.toFixed(0)} s, CPU/wall ${r.cpuPerWall.toFixed(2)})`);
      const floor = floorRuns.reduce((a, b) => (b.seconds < a.seconds ? b : a));
      const floorSeconds = floor.seconds;

      // Questions on the worker's model while nothing else runs: the latency a question usually has.
      embedder = await load();
      const retrieval = { es, indexPrefix: config.elasticsearch.indexPrefix, embedder: async () => embedder! };
      await runDocsIngest(config, { domain: 'questions.bench', source: path.join(corpus.root, 'git-doc'), baseUrl }, () => undefined);
      const ask = async (i: number) => {
        const t = performance.now();
        await retrieveRanked(retrieval, { domain: 'questions.bench', query: questions[i % questions.length]!, pageSize: 5 });
        return performance.now() - t;
      };
      const quiet: number[] = [];
      for (let i = 0; i < 20; i++) quiet.push(await ask(i));

      // Subject: `docs ingest` of the repository, through Temporal and the worker; a question a second meanwhile.
      const domain = 'manuals.bench';
      const before = embedder.queueStats();
      const subjectStart = performance.now();
      let ingestDone = false;
      const ingest = runDocsIngest(config, { domain, source: `${git.url}/bench/manuals.git`, docsPath: 'docs', baseUrl }, () => undefined).finally(() => (ingestDone = true));
      const during: number[] = [];
      const progress: Array<[number, number]> = [];
      const workflowId = docsIngestWorkflowId(config.temporal.taskQueuePrefix, domain);
      for (let i = 0; !ingestDone; i++) {
        const p = await runningIndexingProgress(client, workflowId).catch(() => undefined);
        if (p?.passagesPerSecond !== undefined) progress.push([p.pagesDone, p.passagesPerSecond]);
        if (p && p.indexed < p.total) during.push(await ask(i));
        await Promise.race([ingest.catch(() => undefined), new Promise((r) => setTimeout(r, 1000))]);
      }
      const result = await ingest;
      const subjectSeconds = (performance.now() - subjectStart) / 1000;
      const stats = embedder.queueStats();
      const subjectRate = chunks.length / subjectSeconds;
      const floorRate = chunks.length / floorSeconds;
      const ratio = subjectRate / floorRate;
      ctx.log(`ingest: ${fmtRate(subjectRate, 'passages/s')}, ${fmtRate(corpus.pages / subjectSeconds, 'pages/s')} (${subjectSeconds.toFixed(0)} s, ${result.chunks} passages)`);

      // One chart (bench/lib/charts.ts): the ingest's rate as pages are done, beside the floor's at the whole corpus.
      const charts: ScaleChart[] = [
        {
          id: 'ingest-rate',
          title: `ingest of ${corpus.pages.toLocaleString('en')} pages: passages/s as pages are done`,
          loadLabel: 'pages done',
          throughputLabel: 'passages/s',
          points: [...progress.map(([pages, rate]) => ({ series: 'docent', load: pages, throughput: rate })), { series: 'floor', load: corpus.pages, throughput: floorRate }],
        },
        {
          id: 'question-latency',
          title: 'question latency, quiet (0) and during the ingest (1)',
          loadLabel: 'ingest running',
          throughputLabel: 'questions answered',
          points: [
            { series: 'question', load: 0, throughput: quiet.length, p99Ms: percentile(quiet, 99) },
            { series: 'question', load: 1, throughput: during.length, p99Ms: percentile(during, 99) },
          ],
        },
      ];
      return {
        rows: [
          {
            bench: 'docs-ingest-scale',
            case: `${corpus.pages} pages, ${chunks.length} passages, passages/s`,
            ratio: fmtRatio(ratio),
            target: '≥ 0.8× of a floor that kept every core busy (CPU/wall ≥ 0.9 × cores)',
            ...judgedRow(ingestFloorGoal({ ratio, floorCpuPerWall: floor.cpuPerWall, cores: os.availableParallelism() })),
            subject: `${fmtRate(subjectRate, 'passages/s')}, ${fmtRate(corpus.pages / subjectSeconds, 'pages/s')}`,
            baseline: `${fmtRate(floorRate, 'passages/s')} (${floor.mode}; CPU/wall ${floor.cpuPerWall.toFixed(2)} on ${os.availableParallelism()} cores)`,
          },
          {
            bench: 'docs-ingest-scale',
            case: 'question during the ingest (retrieval on the worker’s model), p50',
            ratio: fmtRatio(percentile(during, 50) / percentile(quiet, 50)),
            target: 'reported',
            met: null,
            subject: `${fmtMs(percentile(during, 50))} (p99 ${fmtMs(percentile(during, 99))}, ${during.length} asked)`,
            baseline: `${fmtMs(percentile(quiet, 50))} quiet (p99 ${fmtMs(percentile(quiet, 99))})`,
          },
        ],
        notes: [
          `docs-ingest-scale: one pair (a full embedding of ${chunks.length} passages takes minutes a side). Subject: \`runDocsIngest\` of a repository over local smart HTTP holding the HTML manuals of ${corpus.root.split('/').pop()} (Debian's postgresql-doc-15, sqlite3-doc, git-doc, turned into Markdown by src/docs/html-to-markdown.ts), start to alias swap, on ${stats.passageBatches - before.passageBatches} batches of ${config.embeddingBatch} over ${embedder.threadCount} model threads. ` +
            `Floor: the same passages embedded by one single-threaded onnxruntime session per core, each on its own worker thread, fed with no queue: ${floorRuns.map((r) => `${r.mode} ${r.seconds.toFixed(0)} s (CPU/wall ${r.cpuPerWall.toFixed(2)})`).join(', ')}; the faster counts. Bulk indexing is not in the floor (docent overlaps it with embedding). ` +
            `Questions on the ingest's own model threads: the longest wait for a thread ${stats.questionWaitMaxMs.toFixed(1)} ms (longest passage batch ${stats.passageBatchMaxMs.toFixed(1)} ms), passage batches ahead of a waiting question ${stats.passageBatchesAheadOfQuestions}.`,
        ],
        charts,
      };
    } finally {
      await connection.close();
      await worker.stop();
      await embedder?.close();
      await deleteIndexes(es, config.elasticsearch.indexPrefix);
      await es.close();
      await git.close();
    }
  },
};
