// docs-ingest-scale: a full ingest of 2,175 real pages (Debian's PostgreSQL, SQLite and git manuals as Markdown)
// from a repository over local smart HTTP, against the model's own speed: the same passages embedded in one tight
// loop by one onnxruntime session on every core, then bulk-indexed.
import { readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import * as ort from 'onnxruntime-node';
import { bulkBatch } from '../activities/docs-embeddings';
import { runDocsIngest } from '../src/cli/docs-ingest';
import { loadConfig } from '../src/config';
import { chunkPage, type DocChunk } from '../src/docs/chunk';
import { runningIndexingProgress } from '../src/docs/ingest-progress';
import { chunkDocument, docsIndexBody, retrieveRanked } from '../src/search/docs-index';
import { type Embedder, embedderLoader, embeddingText, modelFiles } from '../src/search/embedder';
import { createEsClient } from '../src/search/es-client';
import { Client, Connection } from '@temporalio/client';
import { temporalConnectionOptions, temporalDataConverter } from '../src/temporal/connection';
import { docsIngestWorkflowId } from '../workflows/docs-ingest-contract';
import { startWorker } from '../test/support/docs';
import { startGitServer } from '../test/support/git-server';
import type { Benchmark } from './lib/bench';
import type { ScaleChart } from './lib/report';
import { debianDocsMarkdown } from './lib/debian-docs';
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

/**
 * The floor: one single-threaded session per core, each embedding its share of the texts one per run in a tight loop,
 * nothing else. (One session with onnxruntime's intra-op threads on every core was a weaker floor: in one measurement 1.76× slower than
 * two single-threaded sessions side by side for this small model, so docent's ingest read 1.2–1.6× "its floor".)
 */
async function tightLoop(modelDir: string, texts: string[]): Promise<Float32Array[]> {
  const tokenizer = new Tokenizer(JSON.parse(await readFile(path.join(modelDir, modelFiles.tokenizer), 'utf8')), {});
  const cores = os.availableParallelism();
  const sessions = await Promise.all(
    Array.from({ length: cores }, () => ort.InferenceSession.create(path.join(modelDir, modelFiles.model), { graphOptimizationLevel: 'all', intraOpNumThreads: 1, interOpNumThreads: 1 })),
  );
  const out: Float32Array[] = new Array(texts.length);
  const embedShare = async (session: ort.InferenceSession, first: number) => {
    for (let i = first; i < texts.length; i += cores) {
      let ids: number[] = tokenizer.encode(texts[i]!).ids;
      if (ids.length > 256) ids = [...ids.slice(0, 255), ids[ids.length - 1]!];
      const shape = [1, ids.length];
      const r = await session.run({
        input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), shape),
        attention_mask: new ort.Tensor('int64', new BigInt64Array(ids.length).fill(1n), shape),
        token_type_ids: new ort.Tensor('int64', new BigInt64Array(ids.length), shape),
      });
      const hidden = r.last_hidden_state!;
      const data = hidden.data as Float32Array;
      const dims = hidden.dims[2]!;
      const v = new Float32Array(dims);
      for (let t = 0; t < ids.length; t++) for (let d = 0; d < dims; d++) v[d]! += data[t * dims + d]!;
      const norm = Math.hypot(...v) || 1;
      out[i] = v.map((x) => x / norm);
    }
  };
  await Promise.all(sessions.map((session, k) => embedShare(session, k)));
  await Promise.all(sessions.map((session) => session.release()));
  return out;
}

export const docsIngestScale: Benchmark = {
  name: 'docs-ingest-scale',
  summary: 'a full ingest of 2,175 real pages (git over local HTTP) vs the model embedding the same passages in a tight loop plus their bulk requests',
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
      // Floor: the passages in one tight loop, then their bulk requests (Elasticsearch takes at most 100 MB a request).
      const floorStart = performance.now();
      const vectors = await tightLoop(config.embeddingModelDir, chunks.map(embeddingText));
      const floorEmbedSeconds = (performance.now() - floorStart) / 1000;
      const floorIndex = `${config.elasticsearch.indexPrefix}-floor`;
      await es.indices.create({ index: floorIndex, ...docsIndexBody(vectors[0]!.length) });
      for (let i = 0; i < chunks.length; i += bulkBatch) {
        const r = await es.bulk({ operations: chunks.slice(i, i + bulkBatch).flatMap((c, j) => [{ index: { _index: floorIndex, _id: c.id } }, chunkDocument(c, vectors[i + j])]) });
        if (r.errors) throw new Error('bulk indexing of the floor failed');
      }
      await es.indices.refresh({ index: floorIndex });
      const floorSeconds = (performance.now() - floorStart) / 1000;
      ctx.log(`floor: ${fmtRate(chunks.length / floorSeconds, 'passages/s')} (embedding ${floorEmbedSeconds.toFixed(0)} s, in all ${floorSeconds.toFixed(0)} s)`);

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
            target: '≥ 0.8×',
            met: ratio >= 0.8,
            subject: `${fmtRate(subjectRate, 'passages/s')}, ${fmtRate(corpus.pages / subjectSeconds, 'pages/s')}`,
            baseline: fmtRate(floorRate, 'passages/s'),
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
            `Floor: the same passages embedded by one single-threaded onnxruntime session per core, side by side, one text per run in a tight loop (${floorEmbedSeconds.toFixed(0)} s), then bulk-indexed ${bulkBatch} a request (${(floorSeconds - floorEmbedSeconds).toFixed(0)} s). ` +
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
