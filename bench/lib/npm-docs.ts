// The npm docs of test/fixtures indexed straight into Elasticsearch (no Temporal), for the retrieval benchmarks.
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { createEsClient } from '../../src/search/es-client';
import { loadConfig } from '../../src/config';
import { chunkPage, type DocChunk } from '../../src/docs/chunk';
import { chunkDocument, docsAlias, docsIndexBody, docsIndexName, type Retrieval } from '../../src/search/docs-index';
import { embedderLoader, embeddingText } from '../../src/search/embedder';

const docs = path.resolve(__dirname, '../../../test/fixtures/docs/npm');

async function listMd(root: string, dir = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(path.join(root, dir), { withFileTypes: true })) {
    const rel = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await listMd(root, rel)));
    else if (/\.md$/.test(e.name)) out.push(rel);
  }
  return out;
}

/** The passages of the npm docs, as ingestion cuts them. */
export async function npmDocChunks(): Promise<DocChunk[]> {
  const files = await listMd(docs);
  return (await Promise.all(files.map(async (f) => chunkPage(f, await readFile(path.join(docs, f), 'utf8'), { baseUrl: 'https://x' })))).flat();
}

export interface NpmDocsIndex {
  retrieval: Retrieval;
  domain: string;
  /** Deletes the index and closes the client. */
  close(): Promise<void>;
}

/** Chunks, embeds and indexes the npm docs under an alias of their own; `log` hears how long embedding took. */
export async function indexNpmDocs(log: (line: string) => void = console.log): Promise<NpmDocsIndex> {
  const run = randomBytes(4).toString('hex');
  const domain = 'retrieval.bench.test';
  const config = loadConfig({ ...process.env, DOCENT_ES_INDEX_PREFIX: `bench-${run}`, DOCENT_LOG_LEVEL: 'silent' });
  const prefix = config.elasticsearch.indexPrefix;
  const es = createEsClient(config.elasticsearch);
  const embeddings = embedderLoader(config.embeddingModelDir, { threads: 0 });
  const index = docsIndexName(prefix, domain, run);
  const close = async () => {
    await es.indices.delete({ index }, { ignore: [404] });
    await es.close();
  };
  try {
    const chunks = await npmDocChunks();
    const embedder = embeddings ? await embeddings() : undefined;
    const started = performance.now();
    const vectors = embedder ? await embedder.embedMany(chunks.map(embeddingText)) : undefined;
    if (embedder) log(`embedded ${chunks.length} chunks in ${((performance.now() - started) / 1000).toFixed(1)} s (${embedder.modelId})`);
    await es.indices.create({ index, ...docsIndexBody(embedder?.dims) });
    await es.bulk({ operations: chunks.flatMap((c, i) => [{ index: { _index: index, _id: c.id } }, chunkDocument(c, vectors?.[i])]) });
    await es.indices.refresh({ index });
    await es.indices.putAlias({ index, name: docsAlias(prefix, domain) });
    return { retrieval: { es, indexPrefix: prefix, embedder: embeddings }, domain, close };
  } catch (err) {
    await close();
    throw err;
  }
}
