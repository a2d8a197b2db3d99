// Markdown/MDX pages to search passages: front matter, heading trail, anchor and plain text per section.
import { slug } from 'github-slugger';
import type { Root } from 'mdast';
import { type FrontMatter, readFrontMatter } from './front-matter';
import { pageFormat, parsePage } from './markdown-tree';
import { pagePath, pageUrl } from './page-address';
import { blocksText } from './plain-text';
import { pageSections } from './sections';

export { type FrontMatter, InvalidFrontMatterError } from './front-matter';
export { pagePath, pageUrl } from './page-address';

/** Bumped whenever the passages made from the same page change, so that unchanged docs are still rebuilt once. */
export const CHUNKER_VERSION = 2;

/** One searchable passage: a section of a page (or a piece of a long section). */
export interface DocChunk {
  /** Unique within the domain: `<path>#<anchor>` plus `~n` for the pieces of a long section. */
  id: string;
  /** The page's path inside the docs without extension, e.g. `commands/npm-ci`. */
  path: string;
  /** The page URL with the section's anchor. */
  url: string;
  title: string;
  /** The page's front matter `description`, searched with every passage of the page. */
  description?: string;
  /** The heading trail of the section, outermost first (the page title is not repeated). */
  headings: string[];
  /** The section's anchor ('' for the text before the first heading). */
  anchor: string;
  text: string;
  version?: string;
  language?: string;
  groups?: string[];
  /** Position in the page, so a page can be shown in order. */
  order: number;
}

export interface ChunkOptions {
  baseUrl: string;
  /** Sections longer than this are split (characters). */
  maxChunkChars?: number;
}

/** Splits one page into passages by heading, each with the trail of headings above it. */
export function chunkPage(relativeFile: string, source: string, opts: ChunkOptions): DocChunk[] {
  const tree = parsePage(source, pageFormat(relativeFile));
  const data = pageFrontMatter(tree, relativeFile);
  const path = pagePath(relativeFile);
  const url = pageUrl(opts.baseUrl, path);
  const sections = pageSections(tree);

  const firstH1 = sections.find((s) => s.depth === 1)?.heading;
  const title = asString(data.title) ?? firstH1 ?? path.split('/').pop()!;
  const meta = { description: asString(data.description), version: asString(data.version), language: asString(data.language ?? data.lang), groups: asList(data.groups) };

  const chunks: DocChunk[] = [];
  const trail: Array<{ depth: number; heading: string }> = [];
  for (const s of sections) {
    if (s.heading !== null) {
      while (trail.length && trail.at(-1)!.depth >= s.depth) trail.pop();
      trail.push({ depth: s.depth, heading: s.heading });
    }
    if (!s.text) continue;
    // The page title already names the page; an h1 equal to it is not repeated in the trail.
    const headings = trail.map((t) => t.heading).filter((h, i) => !(i === 0 && h === title && trail[0]!.depth === 1));
    splitLong(s.text, opts.maxChunkChars ?? 1500).forEach((piece, i) => {
      const id = `${path}#${s.anchor}${i ? `~${i}` : ''}`;
      chunks.push({ id, path, url: s.anchor ? `${url}#${s.anchor}` : url, title, headings, anchor: s.anchor, text: piece, ...defined(meta), order: chunks.length });
    });
  }
  return chunks;
}

function pageFrontMatter(tree: Root, relativeFile: string): FrontMatter {
  const yaml = tree.children.find((node) => node.type === 'yaml');
  return yaml ? readFrontMatter(yaml.value, relativeFile) : {};
}

/** Reads a page's front matter; `body` is the page after it. */
export function parseFrontMatter(source: string): { data: FrontMatter; body: string } {
  const text = source.replace(/\r\n?/g, '\n');
  const yaml = parsePage(text, 'md').children.find((node) => node.type === 'yaml');
  if (!yaml?.position) return { data: {}, body: text };
  return { data: readFrontMatter(yaml.value), body: text.slice(yaml.position.end.offset).replace(/^[ \t]*\n/, '') };
}

/** GitHub's anchor for a heading's text (without the `-1`, `-2` a repeated heading gets). */
export function slugify(heading: string): string {
  return slug(heading);
}

/** Inline Markdown/MDX to plain text: links keep their text, images their alt, tags and emphasis go. */
export function plainInline(s: string): string {
  return blocksText(parsePage(s, 'mdx').children);
}

/** Splits long text at paragraph boundaries into pieces of about `max` characters. */
function splitLong(text: string, max: number): string[] {
  if (text.length <= max) return [text];
  const pieces: string[] = [];
  let current = '';
  for (const para of text.split(/\n\n/)) {
    if (current && current.length + para.length + 2 > max) {
      pieces.push(current);
      current = '';
    }
    current = current ? `${current}\n\n${para}` : para;
    while (current.length > max * 1.5) {
      pieces.push(current.slice(0, max));
      current = current.slice(max);
    }
  }
  if (current) pieces.push(current);
  return pieces;
}

const asString = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
const asList = (v: string | string[] | undefined) =>
  v === undefined
    ? undefined
    : Array.isArray(v)
      ? v
      : v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);

function defined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
