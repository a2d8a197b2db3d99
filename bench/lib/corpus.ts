// A synthetic documentation corpus indexed straight into Elasticsearch behind the alias docent searches.
import type { Client as EsClient } from '@elastic/elasticsearch';
import type { DocChunk } from '../../src/docs/chunk';
import { chunkDocument, docsAlias, docsIndexBody, docsIndexName } from '../../src/search/docs-index';

const topics = [
  'install',
  'publish',
  'registry',
  'workspace',
  'lockfile',
  'script',
  'cache',
  'audit',
  'config',
  'token',
  'scope',
  'version',
  'dependency',
  'package',
  'proxy',
  'mirror',
  'build',
  'test',
  'deploy',
  'release',
];
const verbs = ['installing', 'configures', 'removes', 'updates', 'runs', 'publishes', 'verifies', 'resolves', 'caches', 'links'];
const fillers = 'the a of to in for with when your this that each from by is are be can on as it an or'.split(' ');

// A deterministic generator, so every run indexes the same corpus.
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export const corpusQueries = ['how do I install from the lockfile', 'publish a package to the registry', 'configure a proxy mirror', 'workspace dependency version', 'audit the cache token'];

// What a search costs does not depend on what the vectors mean: the corpus gets seeded random unit vectors, so
// that a 10,000-chunk corpus indexes in seconds instead of a minute of model time.
function randomUnitVector(rand: () => number, dims: number): Float32Array {
  const v = Float32Array.from({ length: dims }, () => rand() - 0.5);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

/** `chunks` passages over chunks/8 pages, with vectors of `dims` if given; returns the index name (the alias points at it). */
export async function indexCorpus(es: EsClient, prefix: string, domain: string, chunks: number, dims?: number): Promise<string> {
  const rand = rng(42);
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
  const docs: DocChunk[] = [];
  for (let i = 0; i < chunks; i++) {
    const page = Math.floor(i / 8);
    const topic = topics[page % topics.length]!;
    const words: string[] = [];
    for (let w = 0; w < 90; w++) words.push(w % 4 === 0 ? pick(topics) : w % 4 === 1 ? pick(verbs) : pick(fillers));
    docs.push({
      id: `section-${page}/${topic}#part-${i % 8}`,
      path: `section-${page % 50}/${topic}-${page}`,
      url: `https://docs.bench.test/section-${page % 50}/${topic}-${page}#part-${i % 8}`,
      title: `${topic} ${page}`,
      headings: [`${pick(verbs)} ${topic}`, `part ${i % 8}`],
      anchor: `part-${i % 8}`,
      text: words.join(' ') + '.',
      order: i % 8,
    });
  }
  const index = docsIndexName(prefix, domain, 'bench');
  await es.indices.create({ index, ...docsIndexBody(dims) });
  const vectorRand = rng(7);
  for (let i = 0; i < docs.length; i += 2000) {
    const r = await es.bulk({ operations: docs.slice(i, i + 2000).flatMap((c) => [{ index: { _index: index, _id: c.id } }, chunkDocument(c, dims ? randomUnitVector(vectorRand, dims) : undefined)]) });
    if (r.errors) throw new Error('bulk indexing of the benchmark corpus failed');
  }
  await es.indices.putSettings({ index, settings: { refresh_interval: '1s' } });
  await es.indices.refresh({ index });
  await es.indices.forcemerge({ index, max_num_segments: 1 });
  await es.indices.putAlias({ index, name: docsAlias(prefix, domain) });
  return index;
}
