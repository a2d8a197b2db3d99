import type { Db } from 'mongodb';
import type { SearchDoc, SearchVia } from '../assistant/search-log';

/** Searches of one normalised query in a range. */
export interface SearchQueryRow {
  /** The newest wording of the query. */
  query: string;
  searches: number;
  /** Result count of the newest search; `searchesWithoutHits` counts those that found nothing. */
  hits: number;
  searchesWithoutHits: number;
  clicks: number;
  /** Searches with at least one result opened, divided by searches. */
  clickThrough: number;
  topClickedPage: { path: string; clicks: number } | null;
  /** Searches by client: the REST endpoint, the MCP tool or the assistant answering a question. */
  via: Record<SearchVia, number>;
  lastSearchedAt: string;
}

// The newest searches read per request; beyond it the report says it read only the newest.
const maxScanned = 20_000;

/** Queries of a domain in `[from, to)`, grouped by normalised query, most searched first (ties: most recent first). */
export async function searchReport(db: Db, domain: string, range: { from: Date; to: Date }, limit: number): Promise<{ queries: SearchQueryRow[]; scanned: number; truncated: boolean }> {
  const docs = await db
    .collection<SearchDoc>('searches')
    .find({ domain, createdAt: { $gte: range.from, $lt: range.to } })
    .project<Pick<SearchDoc, 'query' | 'normalized' | 'results' | 'clicks' | 'via' | 'createdAt'>>({ query: 1, normalized: 1, results: 1, 'clicks.path': 1, via: 1, createdAt: 1 })
    .sort({ createdAt: -1 })
    .limit(maxScanned + 1)
    .toArray();
  const truncated = docs.length > maxScanned;
  const groups = new Map<string, { row: SearchQueryRow; clickedSearches: number; pages: Map<string, number> }>();
  for (const d of docs.slice(0, maxScanned)) {
    let g = groups.get(d.normalized);
    if (!g) {
      g = {
        row: {
          query: d.query,
          searches: 0,
          hits: d.results,
          searchesWithoutHits: 0,
          clicks: 0,
          clickThrough: 0,
          topClickedPage: null,
          via: { api: 0, mcp: 0, assistant: 0 },
          lastSearchedAt: d.createdAt.toISOString(),
        },
        clickedSearches: 0,
        pages: new Map(),
      };
      groups.set(d.normalized, g);
    }
    g.row.searches += 1;
    g.row.via[d.via] += 1;
    if (d.results === 0) g.row.searchesWithoutHits += 1;
    const clicks = d.clicks ?? [];
    g.row.clicks += clicks.length;
    if (clicks.length) g.clickedSearches += 1;
    for (const c of clicks) g.pages.set(c.path, (g.pages.get(c.path) ?? 0) + 1);
  }
  const queries = [...groups.values()].map(({ row, clickedSearches, pages }) => {
    const top = [...pages].sort((a, b) => b[1] - a[1])[0];
    return { ...row, clickThrough: Math.round((clickedSearches / row.searches) * 10_000) / 10_000, topClickedPage: top ? { path: top[0], clicks: top[1] } : null };
  });
  // Rows were made newest first, and the sort is stable: equal counts stay most recent first.
  queries.sort((a, b) => b.searches - a.searches);
  return { queries: queries.slice(0, limit), scanned: Math.min(docs.length, maxScanned), truncated };
}
