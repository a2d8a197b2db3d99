import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createEsClient } from '../../src/search/es-client';
import { chunkPage } from '../../src/docs/chunk';
import { loadConfig } from '../../src/config';
import { chunkDocument, docsAlias, docsIndexBody, docsIndexName, retrieveChunks } from '../../src/search/docs-index';
import { Embedder, EmbeddingModelMissingError, embedderLoader, embeddingText } from '../../src/search/embedder';
import { testConfig } from '../support/config';
import { poll } from '../support/poll';

// The real model the stack installs (infra/stack.sh install model), run in this process.
const config = testConfig();
let embedder: Embedder;
beforeAll(async () => {
  embedder = await embedderLoader(config.embeddingModelDir)!();
});
afterAll(() => embedder.close());

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);

describe('the embedding model', () => {
  it('places a paraphrase nearer than an unrelated sentence', async () => {
    const [q, near, far] = await embedder.embedMany(['which of my packages are out of date?', 'Check for outdated packages', 'Log in to the registry with your account']);
    expect(dot(q!, near!)).toBeGreaterThan(dot(q!, far!) + 0.1);
  });

  // Re-ingestion reuses stored vectors, so a passage must get the same vector whatever is embedded along with it.
  it('gives a text the same vector alone and among other texts, of unit length', async () => {
    const alone = await embedder.embedQuery('clean install');
    const [, among] = await embedder.embedMany(['a much longer passage about installing packages from a lockfile on a continuous integration server', 'clean install']);
    expect(dot(alone, among!)).toBeCloseTo(1, 5);
    expect(Math.hypot(...alone)).toBeCloseTo(1, 4);
  });

  it('embeds a passage longer than the model reads by cutting it', async () => {
    const [v] = await embedder.embedMany(['word '.repeat(2000)]);
    expect(v).toHaveLength(embedder.dims);
    expect(v!.every(Number.isFinite)).toBe(true);
  });

  // A gateway or worker stopped in a process that goes on (tests, `docent` commands) closes its loader: the model's
  // threads must end with it, or each stopped one keeps its threads and their memory.
  it('ends the model threads of a closed loader, and loads the model again on the next call', async () => {
    const threads = () => readdirSync('/proc/self/task').length;
    const load = embedderLoader(config.embeddingModelDir, { threads: 2 })!;
    const first = await load();
    const loaded = threads();
    await load.close();
    await poll('the two model threads ending', threads, (n) => n <= loaded - 2, 10_000);
    const second = await load();
    expect(second).not.toBe(first);
    expect(await second.embedQuery('clean install')).toHaveLength(second.dims);
    await load.close();
    await expect(embedderLoader(config.embeddingModelDir)!.close()).resolves.toBeUndefined(); // never loaded: nothing to end
  });

  it('closed while passages are embedding, lets the run on the thread finish and fails what waits: the process lives on', async () => {
    const load = embedderLoader(config.embeddingModelDir, { threads: 1, batch: 8 })!;
    const model = await load();
    // Enough text that a run is on the thread when close comes; terminating it there aborted the process (SIGABRT).
    const texts = Array.from({ length: 64 }, (_, i) => `passage ${i}: ${'the install command writes the lockfile and the cache. '.repeat(20)}`);
    const embedding = model.embedMany(texts).then(
      (v) => ({ vectors: v.length }),
      (err: Error) => ({ error: err.message }),
    );
    await new Promise((r) => setTimeout(r, 50));
    await load.close();
    expect(await embedding).toEqual({ error: expect.stringContaining('closed') });
    // Still here, and the model loads again.
    const again = await load();
    expect(await again.embedQuery('clean install')).toHaveLength(again.dims);
    await load.close();
  });

  // A test run, or a worker re-ingesting pages it has embedded before, finds every text in the vector cache: loading the
  // model there only costs CPU, so its threads start on the first text the cache misses.
  it('with a vector cache that knows the model, starts no model thread until a text misses the cache', async () => {
    const threads = () => readdirSync('/proc/self/task').length;
    const cacheDir = await mkdtemp(path.join(os.tmpdir(), 'docent-vector-cache-'));
    try {
      const first = await Embedder.load(config.embeddingModelDir!, { threads: 2, cacheDir });
      const cached = await first.embedQuery('clean install');
      await first.close();

      const before = threads();
      const again = await Embedder.load(config.embeddingModelDir!, { threads: 2, cacheDir });
      expect(again.dims).toBe(first.dims);
      expect(Array.from(await again.embedQuery('clean install'))).toEqual(Array.from(cached));
      expect(threads()).toBe(before);
      expect(again.queueStats().questions).toBe(0);

      const missed = await again.embedQuery('a sentence this cache has never seen');
      expect(missed).toHaveLength(again.dims);
      expect(threads()).toBe(before + 2);
      expect(again.queueStats().questions).toBe(1);
      await again.close();
      await poll('the two model threads ending', threads, (n) => n <= before, 10_000);
      await expect(again.embedQuery('after close')).rejects.toThrow(/closed/);
    } finally {
      await rm(cacheDir, { recursive: true, force: true });
    }
  });

  it('names the fix when the model folder is missing, and is skipped when embeddings are off', async () => {
    const empty = await mkdtemp(path.join(os.tmpdir(), 'docent-no-model-'));
    try {
      expect(() => embedderLoader(empty)).toThrow(EmbeddingModelMissingError);
      expect(() => embedderLoader(empty)).toThrow(/npm run stack -- install model.*DOCENT_EMBEDDINGS=off/);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
    expect(embedderLoader(loadConfig({ DOCENT_EMBEDDINGS: 'off' }).embeddingModelDir)).toBeUndefined();
  });
});

describe('the passage vectors of a docs index', () => {
  const es = createEsClient(config.elasticsearch);
  const prefix = config.elasticsearch.indexPrefix;
  const domain = 'docs.bbq.test';
  const index = docsIndexName(prefix, domain, '0000000000000001');
  afterAll(async () => {
    await es.indices.delete({ index }, { ignore: [404] });
    await es.close();
  });

  // BBQ with rescoring recalled as well as int8 in less time and memory (docs/decisions/2026-11-27-search-at-a-million.md).
  it('are indexed quantised to bits (BBQ) with rescoring, and still find the passage', async () => {
    const chunks = chunkPage(
      'guides/deploy.md',
      '# Deploy\n\n## Ship the site\n\nRun `kiln deploy --target prod` to ship the site.\n\n## Roll back\n\nRun `kiln rollback` to return to the previous release.\n',
      {
        baseUrl: 'https://kiln.example',
      },
    );
    const vectors = await embedder.embedMany(chunks.map(embeddingText));
    await es.indices.create({ index, ...docsIndexBody(embedder.dims) });
    await es.bulk({ refresh: true, operations: chunks.flatMap((c, i) => [{ index: { _index: index, _id: c.id } }, chunkDocument(c, vectors[i])]) });
    await es.indices.putAlias({ index, name: docsAlias(prefix, domain) });
    const field = (await es.indices.getFieldMapping({ index, fields: 'embedding', include_defaults: true }))[index]!.mappings.embedding!.mapping.embedding as {
      index_options?: { type?: string; rescore_vector?: { oversample?: number } };
    };
    expect(field.index_options?.type).toBe('bbq_hnsw');
    expect(field.index_options?.rescore_vector?.oversample).toBeGreaterThan(1);
    const passages = await retrieveChunks({ es, indexPrefix: prefix, embedder: async () => embedder }, { domain, query: 'how do I undo a release', pageSize: 5 });
    expect(passages[0]?.headings).toContain('Roll back');
  });
});

describe('retrieval over an index built without vectors', () => {
  const es = createEsClient(config.elasticsearch);
  const prefix = config.elasticsearch.indexPrefix;
  const domain = 'docs.novectors.test';
  const index = docsIndexName(prefix, domain, '0000000000000000');
  afterAll(async () => {
    await es.indices.delete({ index }, { ignore: [404] });
    await es.close();
  });

  // An index from before embeddings (or from a worker with them off) keeps answering until it is re-ingested.
  it('falls back to BM25 instead of failing', async () => {
    const chunks = chunkPage('guides/deploy.md', '# Deploy\n\n## Ship the site\n\nRun `kiln deploy --target prod` to ship the site.\n', { baseUrl: 'https://kiln.example' });
    await es.indices.create({ index, ...docsIndexBody() });
    await es.bulk({ refresh: true, operations: chunks.flatMap((c) => [{ index: { _index: index, _id: c.id } }, chunkDocument(c)]) });
    await es.indices.putAlias({ index, name: docsAlias(prefix, domain) });
    const passages = await retrieveChunks({ es, indexPrefix: prefix, embedder: async () => embedder }, { domain, query: 'deploy the site', pageSize: 5 });
    expect(passages.map((p) => p.path)).toEqual(['guides/deploy']);
  });
});
