import { createHash } from 'node:crypto';
import type { Client as EsClient, estypes } from '@elastic/elasticsearch';
import { isIndexNotFound } from './docs-index';
import { visibilityFilter } from './visibility';

/** A page as the index holds it: its passages in page order. */
export interface IndexedPage {
  path: string;
  /** The page's URL, without a section anchor. */
  url: string;
  title: string;
  description?: string;
  sections: Array<{ headings: string[]; text: string }>;
}

interface PageChunk {
  path: string;
  url: string;
  title: string;
  description?: string;
  headings?: string[];
  text: string;
  order: number;
}

const pageFields = ['path', 'url', 'title', 'description', 'headings', 'text', 'order'];
const pageUrlOf = (url: string) => url.split('#')[0]!;

/** Groups passages (sorted by path, then order) into pages. */
function toPages(chunks: PageChunk[]): IndexedPage[] {
  const pages: IndexedPage[] = [];
  for (const c of chunks) {
    let page = pages.at(-1);
    if (page?.path !== c.path) {
      page = { path: c.path, url: pageUrlOf(c.url), title: c.title, ...(c.description ? { description: c.description } : {}), sections: [] };
      pages.push(page);
    }
    page.sections.push({ headings: c.headings ?? [], text: c.text });
  }
  return pages;
}

/**
 * Every passage the visibility filter lets through, page by page, read with search_after so that a large docs set
 * is read in slices. `paths` narrows to some pages. A domain without docs has none.
 */
export async function readPages(es: EsClient, index: string, opts: { visibleGroups: readonly string[]; path?: string }): Promise<IndexedPage[]> {
  const filter: estypes.QueryDslQueryContainer[] = [visibilityFilter(opts.visibleGroups), ...(opts.path ? [{ term: { path: opts.path } }] : [])];
  const chunks: PageChunk[] = [];
  let after: estypes.SortResults | undefined;
  for (;;) {
    const r = await es
      .search<PageChunk>({ index, size: 1000, query: { bool: { filter } }, sort: [{ path: 'asc' }, { order: 'asc' }], _source: pageFields, ...(after ? { search_after: after } : {}) })
      .catch((err: unknown) => {
        if (isIndexNotFound(err)) return null;
        throw err;
      });
    if (!r) return [];
    chunks.push(...r.hits.hits.map((h) => h._source!));
    if (r.hits.hits.length < 1000) break;
    after = r.hits.hits.at(-1)!.sort;
  }
  return toPages(chunks);
}

/** A page as Markdown, rebuilt from its passages: the title, then each section under its heading. */
export function pageMarkdown(page: IndexedPage): string {
  const lines = [`# ${page.title}`, ''];
  if (page.description) lines.push(`> ${page.description}`, '');
  let previous: string[] = [];
  for (const s of page.sections) {
    // A long section is stored in pieces with the same heading trail: its heading is written once.
    const same = s.headings.length === previous.length && s.headings.every((h, i) => h === previous[i]);
    if (!same && s.headings.length) lines.push(`${'#'.repeat(Math.min(s.headings.length + 1, 6))} ${s.headings.at(-1)}`, '');
    lines.push(s.text, '');
    previous = s.headings;
  }
  return lines.join('\n');
}

/** The versioned index an alias serves, or undefined when the domain has no docs. */
export async function servedIndex(es: EsClient, alias: string): Promise<string | undefined> {
  return (await servedView(es, alias))?.index;
}

/** What an alias serves: its index, and a version that changes whenever readers would see other pages. */
export interface ServedView {
  index: string;
  /** A hash of the index name and the alias's filter: a docs sync publishes by changing one or the other. */
  version: string;
}

/** The index and filter readers of `alias` see now, or undefined when the domain has no docs. */
export async function servedView(es: EsClient, alias: string): Promise<ServedView | undefined> {
  const served = (await es.indices.getAlias({ name: alias }).catch(() => ({}))) as Record<string, { aliases?: Record<string, { filter?: unknown }> }>;
  const index = Object.keys(served)[0];
  if (!index) return undefined;
  const filter = served[index]?.aliases?.[alias]?.filter ?? null;
  return {
    index,
    version: createHash('sha256')
      .update(`${index}\n${JSON.stringify(filter)}`)
      .digest('hex')
      .slice(0, 16),
  };
}
