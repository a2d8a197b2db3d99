// Assistant figures: ingestion throughput, search latency, time to first streamed byte. Prints figures, never fails on timing.
// Run: npm run bench:assistant (needs the local stack: bash infra/stack.sh start)
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Client as EsClient } from '@elastic/elasticsearch';
import { streamText } from 'ai';
import { runDocsIngest } from '../src/cli/docs-ingest';
import { loadConfig } from '../src/config';
import { chunkPage } from '../src/docs/chunk';
import { createLanguageModel } from '../src/llm/model';
import { chunkDocument, docsIndexBody } from '../src/search/docs-index';
import { startGateway } from '../test/support/gateway';
import { startScriptedModel } from '../test/support/scripted-model';
import { sameStack, startWorker } from '../test/support/docs';

const docs = path.resolve(__dirname, '../../test/fixtures/docs/npm');
const domain = 'bench.docs.test';
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const ms = (x: number) => `${x.toFixed(1)} ms`;

async function listMd(root: string, dir = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(path.join(root, dir), { withFileTypes: true })) {
    const rel = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await listMd(root, rel)));
    else if (/\.md$/.test(e.name)) out.push(rel);
  }
  return out;
}

async function main() {
  const run = randomBytes(4).toString('hex');
  const config = loadConfig({ ...process.env, DOCENT_MONGO_DB: `docent_bench_${run}`, DOCENT_TASK_QUEUE_PREFIX: `bench-${run}-`, DOCENT_ES_INDEX_PREFIX: `bench-${run}`, DOCENT_LOG_LEVEL: 'silent' });
  const es = new EsClient({ node: config.elasticsearch.url });
  const worker = await startWorker(config);
  const model = await startScriptedModel(() => ({ text: ['Run ', '`npm ci` ', 'for a clean install [1].'] }));
  const gw = await startGateway(sameStack(config, { DOCENT_MODEL_PROVIDER: 'openai-compatible', DOCENT_MODEL: model.modelId, DOCENT_MODEL_BASE_URL: model.baseUrl, DOCENT_MODEL_API_KEY: model.apiKey }));
  try {
    // 1. Ingestion through Temporal vs the same chunking + bulk indexing called directly.
    let t = performance.now();
    const r = await runDocsIngest(config, { domain, source: docs }, () => undefined);
    const ingestS = (performance.now() - t) / 1000;
    t = performance.now();
    await runDocsIngest(config, { domain, source: docs }, () => undefined);
    const unchangedS = (performance.now() - t) / 1000;
    t = performance.now();
    const files = await listMd(docs);
    const chunks = (await Promise.all(files.map(async (f) => chunkPage(f, await readFile(path.join(docs, f), 'utf8'), { baseUrl: 'https://x' })))).flat();
    const baseIndex = `bench-${run}-baseline`;
    await es.indices.create({ index: baseIndex, ...docsIndexBody });
    await es.bulk({ operations: chunks.flatMap((c) => [{ index: { _index: baseIndex, _id: c.id } }, chunkDocument(c)]) });
    await es.indices.refresh({ index: baseIndex });
    const baselineS = (performance.now() - t) / 1000;
    await es.indices.delete({ index: baseIndex });
    console.log(`ingestion: ${r.pages} pages, ${r.chunks} chunks in ${ingestS.toFixed(2)} s = ${(r.chunks! / ingestS).toFixed(0)} chunks/s through Temporal` +
      ` | baseline (chunk + bulk, no workflow): ${(chunks.length / baselineS).toFixed(0)} chunks/s | unchanged re-ingest: ${unchangedS.toFixed(2)} s`);

    // 2. Search latency: 200 sequential REST searches vs the same query sent to Elasticsearch directly.
    const key = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'bench', domain })).key;
    const queries = ['clean install from the lockfile', 'remove a package', 'publish to the registry', 'run a script', 'workspaces'];
    const rest: number[] = [];
    for (let i = 0; i < 200; i++) {
      t = performance.now();
      const res = await fetch(`${gw.url}/discovery/v1/search/${domain}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ query: queries[i % queries.length] }) });
      await res.json();
      rest.push(performance.now() - t);
    }
    const direct: number[] = [];
    for (let i = 0; i < 200; i++) {
      t = performance.now();
      await es.search({ index: `${config.elasticsearch.indexPrefix}-docs-${domain}`, size: 10, query: { match: { text: queries[i % queries.length]! } } });
      direct.push(performance.now() - t);
    }
    console.log(`search (200 sequential, REST incl. auth): p50 ${ms(pct(rest, 50))}, p95 ${ms(pct(rest, 95))} | baseline (plain ES match query): p50 ${ms(pct(direct, 50))}`);

    // 3. Time to first streamed byte and to first text delta (v2, scripted model) vs calling the model directly.
    const firstByte: number[] = [];
    const firstText: number[] = [];
    for (let i = 0; i < 30; i++) {
      t = performance.now();
      const res = await fetch(`${gw.url}/discovery/v2/assistant/${domain}/message`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ fp: 'anonymous', messages: [{ role: 'user', parts: [{ type: 'text', text: 'How do I do a clean install in CI?' }] }] }),
      });
      const reader = res.body!.getReader();
      let seen = '';
      let gotByte = false;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!gotByte) (gotByte = true), firstByte.push(performance.now() - t);
        seen += Buffer.from(value).toString('utf8');
        if (firstText.length <= i && seen.includes('"text-delta"')) firstText.push(performance.now() - t);
      }
    }
    const lm = createLanguageModel(gw.deps.config.model)!;
    const directModel: number[] = [];
    for (let i = 0; i < 30; i++) {
      t = performance.now();
      const s = streamText({ model: lm, prompt: 'hi' });
      for await (const _ of s.textStream) {
        directModel.push(performance.now() - t);
        break;
      }
      await s.consumeStream();
    }
    console.log(`v2 stream (30 requests, scripted model): first byte p50 ${ms(pct(firstByte, 50))}, first text delta p50 ${ms(pct(firstText, 50))} | baseline (first token from the model directly): p50 ${ms(pct(directModel, 50))}`);
  } finally {
    const indexes = Object.keys(await es.indices.get({ index: `${config.elasticsearch.indexPrefix}-*` }).catch(() => ({})));
    if (indexes.length) await es.indices.delete({ index: indexes.join(',') });
    await gw.stop();
    await worker.stop();
    await model.close();
    await es.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
