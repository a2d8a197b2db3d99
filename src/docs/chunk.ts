// Markdown/MDX pages to search passages: front matter, heading trail, anchor and cleaned text per section.

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

export type FrontMatter = Record<string, string | string[]>;

/** Reads a `---` front matter block of `key: value`, `key: [a, b]` and block lists; other YAML is ignored. */
export function parseFrontMatter(source: string): { data: FrontMatter; body: string } {
  const m = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(source);
  if (!m) return { data: {}, body: source };
  const data: FrontMatter = {};
  let listKey: string | null = null;
  for (const line of m[1]!.split(/\r?\n/)) {
    const item = /^\s+-\s+(.*)$/.exec(line);
    if (item && listKey) {
      const list = data[listKey];
      data[listKey] = [...(Array.isArray(list) ? list : []), unquote(item[1]!)];
      continue;
    }
    const kv = /^([A-Za-z_][\w-]*):\s*(.*)$/.exec(line);
    if (!kv) continue;
    const [, key, raw] = kv as unknown as [string, string, string];
    listKey = raw.trim() === '' ? key : null;
    if (listKey) continue;
    const inline = /^\[(.*)\]$/.exec(raw.trim());
    data[key] = inline ? inline[1]!.split(',').map((s) => unquote(s)).filter(Boolean) : unquote(raw);
  }
  return { data, body: source.slice(m[0].length) };
}

function unquote(s: string): string {
  const t = s.trim();
  return /^(["']).*\1$/.test(t) ? t.slice(1, -1) : t;
}

/** GitHub-style heading anchors: lowercase, punctuation dropped, spaces to hyphens. */
export function slugify(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/<[^>]*>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

/** Inline Markdown/MDX to plain text: links keep their text, images their alt, tags and emphasis go. */
export function plainInline(s: string): string {
  return s
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\[[^\]]*\]/g, '$1')
    .replace(/<\/?[A-Za-z][^>]*>/g, '')
    .replace(/\{\/\*[\s\S]*?\*\/\}/g, '')
    .replace(/(\*\*|__)(.+?)\1/g, '$2')
    .replace(/`([^`]+)`/g, '$1')
    .trim();
}

function cleanBody(lines: string[]): string {
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of lines) {
    const f = /^\s*(```+|~~~+)/.exec(line);
    if (f) {
      if (fence === null) fence = f[1]!;
      else if (line.trim().startsWith(fence)) fence = null;
      out.push(line.trim().startsWith('```') || line.trim().startsWith('~~~') ? '' : line);
      continue;
    }
    if (fence !== null) {
      out.push(line);
      continue;
    }
    if (/^\s*(import|export)\s.+$/.test(line)) continue; // MDX module lines
    if (/^\s*\[[^\]]+\]:\s*\S+/.test(line)) continue; // link reference definitions
    out.push(plainInline(line));
  }
  return out.join('\n').replace(/\n{3,}/g, '\n\n').trim();
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

/** `commands/npm-ci.md` → `commands/npm-ci`; backslashes become slashes. */
export function pagePath(relativeFile: string): string {
  return relativeFile.replace(/\\/g, '/').replace(/^\/+/, '').replace(/\.(md|mdx|markdown)$/i, '');
}

/** The page URL: `index` pages are their folder's URL. */
export function pageUrl(baseUrl: string, path: string): string {
  const base = baseUrl.replace(/\/+$/, '');
  const page = path === 'index' ? '' : path.replace(/(^|\/)index$/, '$1');
  return `${base}/${page}`;
}

const asString = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
const asList = (v: string | string[] | undefined) => (v === undefined ? undefined : Array.isArray(v) ? v : v.split(',').map((s) => s.trim()).filter(Boolean));

export interface ChunkOptions {
  baseUrl: string;
  /** Sections longer than this are split (characters). */
  maxChunkChars?: number;
}

/** Splits one page into passages by heading, each with the trail of headings above it. */
export function chunkPage(relativeFile: string, source: string, opts: ChunkOptions): DocChunk[] {
  const { data, body } = parseFrontMatter(source.replace(/\r\n/g, '\n'));
  const path = pagePath(relativeFile);
  const url = pageUrl(opts.baseUrl, path);
  const lines = body.split('\n');

  interface Section { level: number; heading: string | null; lines: string[] }
  const sections: Section[] = [{ level: 0, heading: null, lines: [] }];
  let fence: string | null = null;
  for (const line of lines) {
    const f = /^\s*(```+|~~~+)/.exec(line);
    if (f) fence = fence === null ? f[1]! : line.trim().startsWith(fence) ? null : fence;
    const h = fence === null && !f ? /^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(line) : null;
    if (h) sections.push({ level: h[1]!.length, heading: plainInline(h[2]!), lines: [] });
    else sections.at(-1)!.lines.push(line);
  }

  const firstH1 = sections.find((s) => s.level === 1)?.heading;
  const title = asString(data.title) ?? firstH1 ?? path.split('/').pop()!;
  const description = asString(data.description);
  const meta = { description, version: asString(data.version), language: asString(data.language ?? data.lang), groups: asList(data.groups) };

  const chunks: DocChunk[] = [];
  const seenAnchors = new Map<string, number>();
  const trail: Array<{ level: number; heading: string }> = [];
  for (const s of sections) {
    let anchor = '';
    if (s.heading !== null) {
      while (trail.length && trail.at(-1)!.level >= s.level) trail.pop();
      trail.push({ level: s.level, heading: s.heading });
      const slug = slugify(s.heading);
      const n = seenAnchors.get(slug) ?? 0;
      seenAnchors.set(slug, n + 1);
      anchor = n === 0 ? slug : `${slug}-${n}`;
    }
    const text = cleanBody(s.lines);
    if (!text) continue;
    // The page title already names the page; an h1 equal to it is not repeated in the trail.
    const headings = trail.map((t) => t.heading).filter((h, i) => !(i === 0 && h === title && trail[0]!.level === 1));
    const pieces = splitLong(text, opts.maxChunkChars ?? 1500);
    pieces.forEach((piece, i) => {
      const id = `${path}#${anchor}${i ? `~${i}` : ''}`;
      chunks.push({ id, path, url: anchor ? `${url}#${anchor}` : url, title, headings, anchor, text: piece, ...defined(meta), order: chunks.length });
    });
  }
  return chunks;
}

function defined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
