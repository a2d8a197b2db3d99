// What a domain's served index holds, as an operator browses it: counts, the pages with their passage counts, and one
// page's passages. Unlike src/search/pages.ts (what readers may see), this reads every page, restricted ones included.
import type { Client as EsClient, estypes } from '@elastic/elasticsearch';
import { AppError } from '../errors';
import { isIndexNotFound } from '../search/docs-index';

export interface IndexCounts {
  /** The versioned index the alias serves now. */
  index: string;
  pages: number;
  passages: number;
}

export interface PageSummary {
  path: string;
  title: string;
  url: string;
  passages: number;
  /** The groups that may read the page; absent: public. */
  groups?: string[];
}

export interface PagePassage {
  anchor?: string;
  headings: string[];
  text: string;
  url: string;
}

const noIndex =
  <T>(fallback: T) =>
  (err: unknown) => {
    if (isIndexNotFound(err)) return fallback;
    throw err;
  };

/** The served index's name and counts, or undefined when nothing was ever ingested for the alias. */
export async function indexCounts(es: EsClient, alias: string): Promise<IndexCounts | undefined> {
  // A missing alias is a 404 of its own kind (not index_not_found): ask whether it exists first.
  if (!(await es.indices.existsAlias({ name: alias }))) return undefined;
  const served = await es.indices.getAlias({ name: alias }).catch(noIndex(undefined));
  const index = served ? Object.keys(served)[0] : undefined;
  if (!index) return undefined;
  const r = await es.search({
    index,
    size: 0,
    track_total_hits: true,
    // Exact below 40,000 pages (Elasticsearch's highest threshold): far above any docs set ingested here.
    aggs: { pages: { cardinality: { field: 'path', precision_threshold: 40_000 } } },
  });
  const total = typeof r.hits.total === 'number' ? r.hits.total : (r.hits.total?.value ?? 0);
  return { index, pages: (r.aggregations?.pages as estypes.AggregationsCardinalityAggregate | undefined)?.value ?? 0, passages: total };
}

/** One page of the page list, by path; `after` is the last path of the previous page of the list. */
export async function listIndexedPages(es: EsClient, alias: string, opts: { limit: number; after?: string }): Promise<{ pages: PageSummary[]; next?: string }> {
  const r = await es
    .search({
      index: alias,
      size: 0,
      aggs: {
        pages: {
          composite: { size: opts.limit, sources: [{ path: { terms: { field: 'path' } } }], ...(opts.after !== undefined && { after: { path: opts.after } }) },
          aggs: { first: { top_hits: { size: 1, sort: [{ order: 'asc' }], _source: ['title', 'url', 'groups'] } } },
        },
      },
    })
    .catch(noIndex(undefined));
  const agg = r?.aggregations?.pages as estypes.AggregationsCompositeAggregate | undefined;
  const buckets = (agg?.buckets ?? []) as Array<{ key: { path: string }; doc_count: number; first: { hits: { hits: Array<{ _source?: { title?: string; url?: string; groups?: string[] } }> } } }>;
  const pages = buckets.map((b) => {
    const s = b.first.hits.hits[0]?._source ?? {};
    return { path: b.key.path, title: s.title ?? b.key.path, url: (s.url ?? '').split('#')[0]!, passages: b.doc_count, ...(s.groups?.length && { groups: s.groups }) };
  });
  return { pages, ...(pages.length === opts.limit && { next: pages.at(-1)!.path }) };
}

/** A page's passages in page order; an unknown page is not_found. */
export async function indexedPagePassages(es: EsClient, alias: string, path: string): Promise<{ path: string; title: string; passages: PagePassage[] }> {
  const r = await es
    .search<{ title: string; url: string; anchor?: string; headings?: string[]; text: string }>({
      index: alias,
      size: 1000,
      query: { term: { path } },
      sort: [{ order: 'asc' }],
      _source: ['title', 'url', 'anchor', 'headings', 'text'],
    })
    .catch(noIndex(undefined));
  const hits = r?.hits.hits.map((h) => h._source!) ?? [];
  if (!hits.length) throw new AppError('not_found', `no page ${path.slice(0, 200)} in the served docs`);
  return {
    path,
    title: hits[0]!.title,
    passages: hits.map((h) => ({ ...(h.anchor && { anchor: h.anchor }), headings: h.headings ?? [], text: h.text, url: h.url })),
  };
}
