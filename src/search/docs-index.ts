import { createHash } from 'node:crypto';
import type { Client as EsClient, estypes } from '@elastic/elasticsearch';
import type { DocChunk } from '../docs/chunk';
import { stemText } from './analyze';
import { embeddingText, type Embedder } from './embedder';
import { blendVectors, fuseRanks, rrfK, strictKeywordQuery, vectorSearch } from './hybrid';
import { compactVector, expandVector } from './compact-vector';
import { diverseOrder } from './mmr';
import { visibilityFilter } from './visibility';

/** Bumped whenever the mapping or the indexed fields change, so that unchanged docs are still rebuilt once. */
export const DOCS_INDEX_LAYOUT = 5;

// Index names allow few characters; a domain is lowercased and anything else becomes `_`.
const indexSafe = (domain: string) => domain.toLowerCase().replace(/[^a-z0-9._-]/g, '_');

/** The alias searches read: it always points at exactly one complete index. */
export function docsAlias(prefix: string, domain: string): string {
  return `${prefix}-docs-${indexSafe(domain)}`;
}

/** Matches exactly the alias's own versioned indexes (`<alias>-<16 hex>`), so a domain that extends another is never matched. */
export function versionedIndexPattern(alias: string): RegExp {
  return new RegExp(`^${alias.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-[0-9a-f]{16}$`);
}

/** A versioned index behind the alias; the version is the content hash, so identical docs map to the same index. */
export function docsIndexName(prefix: string, domain: string, version: string): string {
  return `${docsAlias(prefix, domain)}-${version}`;
}

/**
 * How the passage vectors are indexed: HNSW over vectors quantised to one bit a dimension (BBQ), the 3× nearest
 * candidates rescored on the float vectors. It recalled at least as well as int8 (Elasticsearch's default) in half
 * the kNN time, and 0.991 of the exact top 10 at 250,000 passages (docs/decisions/2026-11-27-search-at-a-million.md).
 * BBQ needs 64 dimensions or more.
 */
export function vectorIndexOptions(dims: number) {
  return dims >= 64 ? { type: 'bbq_hnsw' as const, m: 16, ef_construction: 100, rescore_vector: { oversample: 3 } } : { type: 'int8_hnsw' as const, m: 16, ef_construction: 100 };
}

/** Settings and mapping of a docs index; `dims` adds the passage vectors, `replicas` copies on other nodes of a cluster. */
export function docsIndexBody(dims?: number, replicas = 0) {
  return {
    settings: { number_of_shards: 1, number_of_replicas: replicas, refresh_interval: '-1' },
    mappings: {
      dynamic: 'strict' as const,
      properties: {
        // Unit-length vectors (see Embedder), so the dot product is the cosine and the cheapest to compute.
        ...(dims ? { embedding: { type: 'dense_vector' as const, dims, index: true, similarity: 'dot_product' as const, index_options: vectorIndexOptions(dims) } } : {}),
        // Hash of the text a vector was made from: re-ingestion reuses vectors whose text has not changed.
        ...(dims ? { embedding_key: { type: 'keyword' as const, index: false } } : {}),
        // The vector again in int8 (compact-vector.ts): cheap to read back for comparing candidates with each other.
        ...(dims ? { embedding_i8: { type: 'binary' as const } } : {}),
        path: { type: 'keyword' as const },
        url: { type: 'keyword' as const, index: false },
        anchor: { type: 'keyword' as const },
        title: { type: 'text' as const },
        description: { type: 'text' as const },
        description_stem: { type: 'text' as const },
        headings: { type: 'text' as const },
        text: { type: 'text' as const },
        title_stem: { type: 'text' as const },
        headings_stem: { type: 'text' as const },
        text_stem: { type: 'text' as const },
        version: { type: 'keyword' as const },
        language: { type: 'keyword' as const },
        groups: { type: 'keyword' as const },
        order: { type: 'integer' as const },
      },
    },
  };
}

/** The document stored for a chunk: its fields, the stemmed copies BM25 runs over and its vector, if any. */
export function chunkDocument(c: DocChunk, embedding?: Float32Array): Record<string, unknown> {
  const { id: _id, ...fields } = c;
  return {
    ...fields,
    ...(embedding ? { embedding: Array.from(embedding), embedding_key: embeddingKey(c), embedding_i8: compactVector(embedding) } : {}),
    title_stem: stemText(c.title),
    description_stem: stemText(c.description ?? ''),
    headings_stem: stemText(c.headings.join(' ')),
    text_stem: stemText(c.text),
  };
}

/** Identifies the text a chunk's vector is made from. */
export function embeddingKey(c: DocChunk): string {
  return createHash('sha256').update(embeddingText(c)).digest('base64url').slice(0, 22);
}

export interface SearchFilter {
  version?: string;
  language?: string;
  /** As the request names them; only `RetrievalQuery.visibleGroups` (see visibility.ts) decides what is shown. */
  groups?: string[];
  pathPrefix?: string;
}

export interface RetrievalQuery {
  domain: string;
  query: string;
  pageSize: number;
  filter?: SearchFilter;
  /** Groups whose restricted pages may be returned (the key's, narrowed by the filter); none: public pages only. */
  visibleGroups?: readonly string[];
  /** The page the user is on: its passages, its section (folder) and its anchor get a boost. */
  currentPath?: string;
  /** Text that helps find passages but should weigh less than the question (selections, the previous question). */
  hints?: string[];
}

export interface Passage {
  id: string;
  path: string;
  url: string;
  title: string;
  headings: string[];
  content: string;
  score: number;
}

/** `/commands/npm-ci.md#options` or a full URL → `{ path: 'commands/npm-ci', anchor: 'options' }`. */
export function normalizeCurrentPath(currentPath: string): { path: string; anchor?: string } {
  let p = currentPath.trim();
  try {
    if (/^https?:\/\//i.test(p)) {
      const u = new URL(p);
      p = u.pathname + u.hash;
    }
  } catch {
    // not a URL: read it as a path
  }
  const [pathPart, anchor] = p.split('#', 2) as [string, string | undefined];
  const path = pathPart
    .split('?')[0]!
    .replace(/^\/+|\/+$/g, '')
    .replace(/\.(md|mdx|markdown|html)$/i, '');
  return { path, anchor: anchor || undefined };
}

function textQuery(query: string, boost: number): estypes.QueryDslQueryContainer {
  const stemmed = stemText(query);
  return {
    bool: {
      boost,
      should: [
        // Stemmed fields carry recall across word forms ("installing" ~ "install").
        ...(stemmed ? [{ multi_match: { query: stemmed, fields: ['title_stem^1.5', 'description_stem^2', 'headings_stem^1.5', 'text_stem'], type: 'cross_fields' as const, tie_breaker: 0.5 } }] : []),
        // The original words reward exact matches of names, flags and commands.
        { multi_match: { query, fields: ['title^2', 'description^1.5', 'headings^1.5', 'text'], type: 'best_fields' as const, tie_breaker: 0.3, boost: 0.5 } },
      ],
    },
  };
}

/** The folder a page is in (`commands/` for `commands/npm-ci`); pages at the root have none. */
function sectionOf(path: string): string | undefined {
  return path.includes('/') ? path.slice(0, path.lastIndexOf('/') + 1) : undefined;
}

/** Every search carries the visibility filter, so a query that forgets the caller's groups sees public pages only. */
function filtersOf(q: Pick<RetrievalQuery, 'filter' | 'visibleGroups'>): estypes.QueryDslQueryContainer[] {
  const f = q.filter ?? {};
  const filter: estypes.QueryDslQueryContainer[] = [visibilityFilter(q.visibleGroups ?? [])];
  if (f.version) filter.push({ term: { version: f.version } });
  if (f.language) filter.push({ term: { language: f.language } });
  if (f.pathPrefix) filter.push({ prefix: { path: f.pathPrefix.replace(/^\/+/, '') } });
  return filter;
}

/** Builds the BM25 query: the question must match, hints and the current page add to the score, filters narrow. */
export function buildRetrievalQuery(q: RetrievalQuery): estypes.QueryDslQueryContainer {
  const filter = filtersOf(q);

  const hints = (q.hints ?? []).filter((h) => h.trim()).map((h) => textQuery(h.slice(0, 1000), 0.4));
  const boosts: estypes.QueryDslQueryContainer[] = [];
  if (q.currentPath) {
    const { path, anchor } = normalizeCurrentPath(q.currentPath);
    if (path) {
      boosts.push({ constant_score: { filter: { term: { path } }, boost: 2 } });
      const section = sectionOf(path);
      if (section) boosts.push({ constant_score: { filter: { prefix: { path: section } }, boost: 1 } });
      if (anchor) boosts.push({ constant_score: { filter: { bool: { filter: [{ term: { path } }, { term: { anchor } }] } }, boost: 1 } });
    }
  }
  return {
    bool: {
      must: [{ bool: { should: [textQuery(q.query, 1), ...hints], minimum_should_match: 1 } }],
      should: boosts,
      filter,
    },
  };
}

interface StoredChunk {
  path: string;
  url: string;
  anchor?: string;
  title: string;
  headings: string[];
  text: string;
  embedding_i8?: string;
}

const storedFields = ['path', 'url', 'anchor', 'title', 'headings', 'text'];
// The hybrid search also reads the candidates' vectors, to tell near-copies apart (see mmr.ts).
const hybridFields = [...storedFields, 'embedding_i8'];

/** Where passages come from: the cluster, the index prefix and, for hybrid retrieval, the embedding model. */
export interface Retrieval {
  es: EsClient;
  indexPrefix: string;
  /** Undefined when embeddings are off: retrieval is then BM25 alone. */
  embedder?: () => Promise<Embedder>;
}

/**
 * How well the docs match a question, whatever the ranks: the relevance floor (src/assistant/relevance.ts) reads it.
 * `cosine` is the question's similarity to its nearest passage (absent without vectors); `keywordMatch` says whether
 * some passage contains every content word of the question.
 */
export interface Relevance {
  cosine?: number;
  keywordMatch: boolean;
}

/** Passages best first, and how relevant the best of them is. */
export interface Retrieved {
  passages: Passage[];
  relevance: Relevance;
}

/**
 * The passages for a question: hybrid (vectors and strict keywords, fused by rank) when the model is on and the index
 * has vectors, BM25 otherwise. A domain with no docs yet has no passages.
 */
export async function retrieveChunks(r: Retrieval, q: RetrievalQuery, signal?: AbortSignal): Promise<Passage[]> {
  return (await retrieveRanked(r, q, signal)).passages;
}

/** retrieveChunks, with the relevance of the best match. */
export async function retrieveRanked(r: Retrieval, q: RetrievalQuery, signal?: AbortSignal): Promise<Retrieved> {
  const embedder = await r.embedder?.();
  const alias = docsAlias(r.indexPrefix, q.domain);
  const hybrid = embedder ? await hybridRetrieve(r.es, alias, embedder, q, signal) : undefined;
  if (hybrid) return hybrid;
  const passages = await retryOnSwap(() => keywordRetrieve(r.es, alias, q, signal));
  return { passages, relevance: { keywordMatch: await hasStrictMatch(r.es, alias, q, signal) } };
}

async function hasStrictMatch(es: EsClient, index: string, q: RetrievalQuery, signal?: AbortSignal): Promise<boolean> {
  const r = await es.count({ index, ignore_unavailable: true, query: strictKeywordQuery(q.query, [], filtersOf(q)) }, { signal }).catch((err: unknown) => {
    if (isIndexNotFound(err)) return { count: 0 };
    throw err;
  });
  return r.count > 0;
}

// The old index can vanish between alias resolution and the search during a swap; the alias is already new.
async function retryOnSwap<T>(search: () => Promise<T>): Promise<T> {
  try {
    return await search();
  } catch (err) {
    if (!isIndexNotFound(err)) throw err;
    return search();
  }
}

async function keywordRetrieve(es: EsClient, index: string, q: RetrievalQuery, signal?: AbortSignal): Promise<Passage[]> {
  // Over-fetch so that one long page cannot take every slot (see diversify).
  const r = await es.search<StoredChunk>({ index, ignore_unavailable: true, size: Math.min(q.pageSize * 3, 100), query: buildRetrievalQuery(q), _source: storedFields }, { signal });
  return diversify(
    r.hits.hits.map((h) => toPassage(h, h._score ?? 0)),
    q.pageSize,
  );
}

/**
 * The one `_msearch` of a hybrid retrieval, given the question's vector (and the hints'): nearest vectors, strict
 * keywords and, when the user is on a page, that page's passages. Exported for the search-scale benchmark's floor.
 */
export function hybridSearches(index: string, q: RetrievalQuery, questionVector: Float32Array, hintVectors: Float32Array[] = []): estypes.MsearchRequestItem[] {
  const hints = (q.hints ?? []).filter((h) => h.trim()).map((h) => h.slice(0, 1000));
  const filter = filtersOf(q);
  const size = Math.min(Math.max(q.pageSize * 3, 30), 100);
  const current = q.currentPath ? normalizeCurrentPath(q.currentPath) : undefined;
  const header = { index, ignore_unavailable: true };
  return [
    header,
    { size, knn: vectorSearch(blendVectors(questionVector, hintVectors), size, filter), _source: hybridFields },
    header,
    { size, query: strictKeywordQuery(q.query, hints, filter), _source: hybridFields },
    // The page the user is on is a source of candidates of its own, best matching passages first.
    ...(current?.path ? [header, { size: 5, query: { bool: { filter: [...filter, { term: { path: current.path } }], should: [textQuery(q.query, 1)] } }, _source: hybridFields }] : []),
  ];
}

/** Undefined when the index holds no vectors (built with embeddings off, or before them). */
async function hybridRetrieve(es: EsClient, index: string, embedder: Embedder, q: RetrievalQuery, signal?: AbortSignal): Promise<Retrieved | undefined> {
  const hints = (q.hints ?? []).filter((h) => h.trim()).map((h) => h.slice(0, 1000));
  const [questionVector, ...hintVectors] = await embedder.embedQueries([q.query, ...hints]);
  const current = q.currentPath ? normalizeCurrentPath(q.currentPath) : undefined;
  const searches = hybridSearches(index, q, questionVector!, hintVectors);
  let { responses } = await es.msearch<StoredChunk>({ searches }, { signal });
  // As in retryOnSwap: an index deleted by a swap after alias resolution; the alias already names the new one.
  if (responses.some((res) => 'error' in res && res.error.type === 'index_not_found_exception')) ({ responses } = await es.msearch<StoredChunk>({ searches }, { signal }));
  const failed = responses.find((res) => 'error' in res);
  if (failed && 'error' in failed) {
    // The vector search is the one an index without vectors refuses; the keyword path still answers.
    if (responses[0] && 'error' in responses[0]) return undefined;
    throw new Error(`search failed: ${failed.error.type}: ${failed.error.reason ?? ''}`);
  }
  const hitsOf = (i: number) => {
    const res = responses[i];
    return res && !('error' in res) ? res.hits.hits : [];
  };
  const stored = new Map<string, estypes.SearchHit<StoredChunk>>();
  const lists = [0, 1, 2]
    .filter((i) => i < responses.length)
    .map((i) => {
      const hits = hitsOf(i);
      for (const h of hits) stored.set(h._id!, h);
      return { ids: hits.map((h) => h._id!), weight: 1 };
    });
  const section = current ? sectionOf(current.path) : undefined;
  const bonus = (id: string) => {
    const h = stored.get(id)!._source!;
    let b = 0;
    // The page the user is on weighs like one more list ranking it first; its folder and anchor a little less.
    if (current?.path === h.path) b += 1 / (rrfK + 1);
    if (section && h.path.startsWith(section)) b += 0.5 / (rrfK + 1);
    if (current?.anchor && h.path === current.path && h.anchor === current.anchor) b += 0.5 / (rrfK + 1);
    return b;
  };
  const vectors = new Map<string, Int8Array>();
  const vectorOf = (id: string) => {
    const s = stored.get(id)!._source!.embedding_i8;
    if (s && !vectors.has(id)) vectors.set(id, expandVector(s));
    return vectors.get(id);
  };
  // An index built before embedding_i8 has no compact vectors: diverseOrder then keeps the fused order.
  const fused = diverseOrder(fuseRanks(lists, bonus), vectorOf);
  // Results are sorted by score: a passage moved below weaker ones for repeating a better one takes their score.
  let cap = Number.POSITIVE_INFINITY;
  const passages = diversify(
    fused.map(({ id, score }) => {
      cap = Math.min(cap, score);
      return toPassage(stored.get(id)!, cap);
    }),
    q.pageSize,
  );
  // Elasticsearch scores dot_product vectors as (1 + cosine) / 2.
  const nearest = hitsOf(0)[0]?._score;
  return { passages, relevance: { cosine: nearest == null ? undefined : 2 * nearest - 1, keywordMatch: hitsOf(1).length > 0 } };
}

function toPassage(h: estypes.SearchHit<StoredChunk>, score: number): Passage {
  const s = h._source!;
  return { id: h._id!, path: s.path, url: s.url, title: s.title, headings: s.headings ?? [], content: s.text, score };
}

/** Best first, at most `perPage` passages of one page while other pages have matches; still in the given order. */
export function diversify(ranked: Passage[], size: number, perPage = 2): Passage[] {
  const taken: Passage[] = [];
  const skipped: Passage[] = [];
  const perPath = new Map<string, number>();
  for (const p of ranked) {
    if (taken.length === size) break;
    const n = perPath.get(p.path) ?? 0;
    if (n < perPage) {
      taken.push(p);
      perPath.set(p.path, n + 1);
    } else skipped.push(p);
  }
  taken.push(...skipped.slice(0, size - taken.length));
  // The order is the ranking's (by score, or re-ordered for diversity), not the scores alone.
  const position = new Map(ranked.map((p, i) => [p, i]));
  return taken.sort((a, b) => position.get(a)! - position.get(b)!);
}

export function isIndexNotFound(err: unknown): boolean {
  const body = (err as { meta?: { body?: { error?: { type?: string } } } })?.meta?.body;
  return body?.error?.type === 'index_not_found_exception';
}
