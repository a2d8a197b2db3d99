// The links a docs page makes and the anchors it offers, read from its Markdown tree as the docs site renders them.
import type { Nodes, Root } from 'mdast';
import { parsePage } from './markdown-tree';
import { pageSections } from './sections';

export interface PageLink {
  /** The target as written: a URL, a path relative to the page, a site path, or `#anchor`. */
  target: string;
  line: number;
}

const isPage = (file: string) => /\.(md|mdx|markdown)$/i.test(file);

function* nodes(node: Nodes): Generator<Nodes> {
  yield node;
  if ('children' in node) for (const child of node.children) yield* nodes(child as Nodes);
}

// `<a href="…">` and `<img src="…">` written as HTML inside Markdown.
const htmlTarget = /<(?:a|img)\b[^>]*?\s(?:href|src)\s*=\s*["']([^"']+)["']/gi;

/** Every link, image and link definition of a Markdown or MDX page, with its line. */
export function pageLinks(file: string, source: string): PageLink[] {
  if (!isPage(file)) return [];
  const tree: Root = parsePage(source, /\.mdx$/i.test(file) ? 'mdx' : 'md');
  const links: PageLink[] = [];
  for (const node of nodes(tree)) {
    const line = node.position?.start.line ?? 0;
    if ((node.type === 'link' || node.type === 'image' || node.type === 'definition') && node.url) links.push({ target: node.url, line });
    if (node.type === 'html') for (const m of node.value.matchAll(htmlTarget)) links.push({ target: m[1]!, line });
  }
  return links;
}

/** The anchors a page's headings have on the docs site. */
export function pageAnchors(file: string, source: string): Set<string> {
  if (!isPage(file)) return new Set();
  return new Set(pageSections(parsePage(source, /\.mdx$/i.test(file) ? 'mdx' : 'md')).map((s) => s.anchor));
}
