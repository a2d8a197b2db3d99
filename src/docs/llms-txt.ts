import { pageMarkdown, type IndexedPage } from '../search/pages';

// llms.txt as llmstxt.org defines it: an H1 with the site's name, a blockquote summary, then H2 sections of
// `- [title](url): description` links. llms-full.txt carries the pages themselves after the same header.

/** A folder's name as a section title: `configuring-npm` → `Configuring npm`. */
const sectionTitle = (folder: string) => {
  const words = folder.replace(/[-_]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/** Markdown link text and single-line descriptions: brackets and line breaks would break the list's syntax. */
const linkText = (s: string) => s.replace(/[[\]]/g, '').replace(/\s+/g, ' ').trim();
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

function header(domain: string, pages: IndexedPage[]): string[] {
  // The docs' root page names the site and says what it is about, when there is one.
  const root = pages.find((p) => p.path === 'index' || p.path === '');
  const summary = root?.description ?? `The documentation published at ${domain}: ${pages.length} pages.`;
  return [`# ${oneLine(root?.title ?? domain)}`, '', `> ${oneLine(summary)}`, ''];
}

/** Pages by top-level folder; pages at the root form the first section, "Docs". */
function sections(pages: IndexedPage[]): Array<[string, IndexedPage[]]> {
  const bySection = new Map<string, IndexedPage[]>();
  for (const p of pages) {
    const name = p.path.includes('/') ? sectionTitle(p.path.slice(0, p.path.indexOf('/'))) : 'Docs';
    bySection.set(name, [...(bySection.get(name) ?? []), p]);
  }
  return [...bySection].sort(([a], [b]) => (a === 'Docs' ? -1 : b === 'Docs' ? 1 : a.localeCompare(b)));
}

/** llms.txt: one link per page, with its description when the page has one. */
export function llmsTxt(domain: string, pages: IndexedPage[]): string {
  const lines = header(domain, pages);
  for (const [name, list] of sections(pages)) {
    lines.push(`## ${name}`, '');
    for (const p of list) lines.push(`- [${linkText(p.title) || p.path}](${p.url})${p.description ? `: ${oneLine(p.description)}` : ''}`);
    lines.push('');
  }
  return lines.join('\n');
}

/** llms-full.txt: the same header, then every page's Markdown, each under its own H1 with its URL. */
export function llmsFullTxt(domain: string, pages: IndexedPage[]): string {
  const lines = header(domain, pages);
  for (const [, list] of sections(pages)) {
    for (const p of list) lines.push(pageMarkdown(p).replace(/\n/, `\nSource: ${p.url}\n`), '');
  }
  return lines.join('\n');
}
