// Retrieval quality and latency on the npm docs: top-5 page hits for the tuning, held-out and identifier sets, and
// search p50 over 200 sequential searches. Indexes directly (no Temporal) into an index of its own, then deletes it.
// Run: npm run bench:retrieval (needs the local stack; DOCENT_EMBEDDINGS=off measures BM25 alone). Held-out misses
// stay hidden unless --show-held-out is given, so that tuning cannot look at them.
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Client as EsClient } from '@elastic/elasticsearch';
import { loadConfig } from '../src/config';
import { chunkPage } from '../src/docs/chunk';
import { chunkDocument, docsAlias, docsIndexBody, docsIndexName, retrieveChunks } from '../src/search/docs-index';
import { embedderLoader, embeddingText } from '../src/search/embedder';
import { heldOutQuestions, heldOutQuestions2, identifierQueries, tuningQuestions } from '../test/support/retrieval-questions';

const docs = path.resolve(__dirname, '../../test/fixtures/docs/npm');
const domain = 'retrieval.bench.test';
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

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
  const showHeldOut = process.argv.includes('--show-held-out');
  const run = randomBytes(4).toString('hex');
  const config = loadConfig({ ...process.env, DOCENT_ES_INDEX_PREFIX: `bench-${run}`, DOCENT_LOG_LEVEL: 'silent' });
  const prefix = config.elasticsearch.indexPrefix;
  const es = new EsClient({ nodes: config.elasticsearch.nodes });
  const embeddings = embedderLoader(config.embeddingModelDir, 0);
  const retrieval = { es, indexPrefix: prefix, embedder: embeddings };
  const index = docsIndexName(prefix, domain, run);
  try {
    const files = await listMd(docs);
    const chunks = (await Promise.all(files.map(async (f) => chunkPage(f, await readFile(path.join(docs, f), 'utf8'), { baseUrl: 'https://x' })))).flat();
    const embedder = embeddings ? await embeddings() : undefined;
    const started = performance.now();
    const vectors = embedder ? await embedder.embedMany(chunks.map(embeddingText)) : undefined;
    if (embedder) console.log(`embedded ${chunks.length} chunks in ${((performance.now() - started) / 1000).toFixed(1)} s (${embedder.modelId})`);
    await es.indices.create({ index, ...docsIndexBody(embedder?.dims) });
    await es.bulk({ operations: chunks.flatMap((c, i) => [{ index: { _index: index, _id: c.id } }, chunkDocument(c, vectors?.[i])]) });
    await es.indices.refresh({ index });
    await es.indices.putAlias({ index, name: docsAlias(prefix, domain) });

    const sets = [
      ['tuning', tuningQuestions, true],
      ['held-out', heldOutQuestions, showHeldOut],
      ['held-out 2', heldOutQuestions2, showHeldOut],
      ['identifiers', identifierQueries, true],
    ] as const;
    for (const [name, set, show] of sets) {
      const misses: string[] = [];
      for (const [q, pages] of set) {
        const got = (await retrieveChunks(retrieval, { domain, query: q, pageSize: 5 })).map((p) => p.path);
        if (!pages.some((p) => got.includes(p))) misses.push(`  ${q} → ${got.join(', ')} (wanted ${pages.join(' or ')})`);
      }
      console.log(`${name}: ${set.length - misses.length}/${set.length} with the right page in the top 5`);
      if (show && misses.length) console.log(misses.join('\n'));
    }

    const questions = [...tuningQuestions, ...heldOutQuestions].map(([q]) => q);
    for (let i = 0; i < 20; i++) await retrieveChunks(retrieval, { domain, query: questions[i % questions.length]!, pageSize: 5 });
    const times: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      await retrieveChunks(retrieval, { domain, query: questions[i % questions.length]!, pageSize: 5 });
      times.push(performance.now() - t);
    }
    console.log(`search (200 sequential, retrieveChunks, pageSize 5): p50 ${pct(times, 50).toFixed(1)} ms, p95 ${pct(times, 95).toFixed(1)} ms`);
  } finally {
    await es.indices.delete({ index }, { ignore: [404] });
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
