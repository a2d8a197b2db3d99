import type { Client as EsClient, estypes } from '@elastic/elasticsearch';
import type { DocChunk } from '../docs/chunk';
import { stemText } from './analyze';

/** Bumped whenever the mapping or the indexed fields change, so that unchanged docs are still rebuilt once. */
export const DOCS_INDEX_LAYOUT = 2;

// Index names allow few characters; a domain is lowercased and anything else becomes `_`.
const indexSafe = (domain: string) => domain.toLowerCase().replace(/[^a-z0-9._-]/g, '_');

/** The alias searches read: it always points at exactly one complete index. */
export function docsAlias(prefix: string, domain: string): string {
  return `${prefix}-docs-${indexSafe(domain)}`;
}

/** A versioned index behind the alias; the version is the content hash, so identical docs map to the same index. */
export function docsIndexName(prefix: string, domain: string, version: string): string {
  return `${docsAlias(prefix, domain)}-${version}`;
}

export const docsIndexBody = {
  settings: { number_of_shards: 1, number_of_replicas: 0, refresh_interval: '-1' },
  mappings: {
    dynamic: 'strict' as const,
    properties: {
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

/** The document stored for a chunk: its fields plus the stemmed copies BM25 runs over. */
export function chunkDocument(c: DocChunk): Record<string, unknown> {
  const { id: _id, ...fields } = c;
  return {
    ...fields,
    title_stem: stemText(c.title),
    description_stem: stemText(c.description ?? ''),
    headings_stem: stemText(c.headings.join(' ')),
    text_stem: stemText(c.text),
  };
}

export interface SearchFilter {
  version?: string;
  language?: string;
  groups?: string[];
  pathPrefix?: string;
}

export interface RetrievalQuery {
  domain: string;
  query: string;
  pageSize: number;
  filter?: SearchFilter;
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
  const path = pathPart.split('?')[0]!.replace(/^\/+|\/+$/g, '').replace(/\.(md|mdx|markdown|html)$/i, '');
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

/** Builds the BM25 query: the question must match, hints and the current page add to the score, filters narrow. */
export function buildRetrievalQuery(q: RetrievalQuery): estypes.QueryDslQueryContainer {
  const filter: estypes.QueryDslQueryContainer[] = [];
  const f = q.filter ?? {};
  if (f.version) filter.push({ term: { version: f.version } });
  if (f.language) filter.push({ term: { language: f.language } });
  // Pages without groups are public; pages with groups are visible to those groups only.
  if (f.groups?.length) filter.push({ bool: { should: [{ terms: { groups: f.groups } }, { bool: { must_not: { exists: { field: 'groups' } } } }] } });
  if (f.pathPrefix) filter.push({ prefix: { path: f.pathPrefix.replace(/^\/+/, '') } });

  const hints = (q.hints ?? []).filter((h) => h.trim()).map((h) => textQuery(h.slice(0, 1000), 0.4));
  const boosts: estypes.QueryDslQueryContainer[] = [];
  if (q.currentPath) {
    const { path, anchor } = normalizeCurrentPath(q.currentPath);
    if (path) {
      boosts.push({ constant_score: { filter: { term: { path } }, boost: 2 } });
      const section = path.includes('/') ? path.slice(0, path.lastIndexOf('/') + 1) : '';
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
  title: string;
  headings: string[];
  text: string;
}

/** Runs the retrieval query against the domain's alias; a domain with no docs yet has no passages. */
export async function retrieveChunks(es: EsClient, indexPrefix: string, q: RetrievalQuery, signal?: AbortSignal): Promise<Passage[]> {
  const search = () =>
    es.search<StoredChunk>(
      {
        index: docsAlias(indexPrefix, q.domain),
        ignore_unavailable: true,
        // Over-fetch so that one long page cannot take every slot (see diversify).
        size: Math.min(q.pageSize * 3, 100),
        query: buildRetrievalQuery(q),
        _source: ['path', 'url', 'title', 'headings', 'text'],
      },
      { signal },
    );
  let r;
  try {
    r = await search();
  } catch (err) {
    // The old index can vanish between alias resolution and the search during a swap; the alias is already new.
    if (!isIndexNotFound(err)) throw err;
    r = await search();
  }
  return diversify(r.hits.hits.map((h) => ({
    id: h._id!,
    path: h._source!.path,
    url: h._source!.url,
    title: h._source!.title,
    headings: h._source!.headings ?? [],
    content: h._source!.text,
    score: h._score ?? 0,
  })), q.pageSize);
}

/** Best first, at most `perPage` passages of one page while other pages have matches; still sorted by score. */
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
  return taken.sort((a, b) => b.score - a.score);
}

export function isIndexNotFound(err: unknown): boolean {
  const body = (err as { meta?: { body?: { error?: { type?: string } } } })?.meta?.body;
  return body?.error?.type === 'index_not_found_exception';
}
