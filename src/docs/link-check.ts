// Finds the links of a docs tree that no longer resolve: inside the docs, a page or file that is not there or an
// anchor no heading has; outside, a URL that answers 4xx. Outside links are checked through the caller's `status`,
// which applies the outbound rules; what those refuse, or what does not answer, is listed apart, never as broken.
import path from 'node:path/posix';
import type { LinkStatus } from '../net/pinned-get';
import { pageAnchors, pageLinks } from './page-links';

export interface LinkSource {
  /** The pages checked: the files under the folder, relative to the repository root. */
  pages: string[];
  /** Every file of the repository, which a link may name. */
  files: string[];
  /** A file's text, or null when it is not there (or not readable as text). */
  read(file: string): Promise<string | null>;
}

export interface BrokenLink {
  file: string;
  line: number;
  link: string;
  reason: string;
}

export interface LinkReport {
  pages: number;
  links: number;
  broken: BrokenLink[];
  /** Outside links not judged: refused by the outbound rules, not answering, or past the cap. */
  unchecked: BrokenLink[];
}

export interface LinkCheckOptions {
  /** The folder whose pages are checked and against which site paths (`/guides/x`) resolve; '' for the root. */
  folder: string;
  status: (url: URL) => Promise<LinkStatus>;
  /** The most outside URLs asked, each once however many pages name it. */
  maxExternal: number;
  concurrency: number;
}

const skipped = /^(mailto|tel|data|javascript|ftp):/i;
const pageExtensions = ['', '.md', '.mdx', '.markdown', '/index.md', '/index.mdx', '/README.md'];

/** A link's percent-encoding undone; a malformed one is kept as written. */
function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The file a link inside the docs names, trying the forms a docs site serves a page under. */
function candidates(from: string, pathPart: string, folder: string): string[] {
  const named = decoded(pathPart);
  const base = named.startsWith('/') ? path.join(folder, named) : path.join(path.dirname(from), named);
  const trimmed = base.replace(/\/+$/, '');
  return pageExtensions.map((ext) => `${trimmed}${ext}`.replace(/^\.\//, ''));
}

async function internalProblem(known: Set<string>, from: string, target: string, folder: string, anchorsOf: (f: string) => Promise<Set<string>>): Promise<string | null> {
  const hash = target.indexOf('#');
  const pathPart = (hash < 0 ? target : target.slice(0, hash)).split('?')[0]!;
  const anchor = hash < 0 ? '' : target.slice(hash + 1);
  let file = from;
  if (pathPart !== '') {
    const found = candidates(from, pathPart, folder).find((c) => known.has(c));
    if (!found) return pathPart.startsWith('/') ? `no page at ${pathPart} under ${folder || 'the repository root'}` : `no file ${path.join(path.dirname(from), pathPart)}`;
    file = found;
  }
  if (anchor === '' || !/\.(md|mdx|markdown)$/i.test(file)) return null;
  return (await anchorsOf(file)).has(decoded(anchor).toLowerCase()) ? null : `${file} has no heading with the anchor #${anchor}`;
}

/** Runs `work` over `items`, `n` at a time. */
async function eachLimited<T>(items: T[], n: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

export async function checkLinks(src: LinkSource, opts: LinkCheckOptions): Promise<LinkReport> {
  const known = new Set(src.files);
  const anchors = new Map<string, Promise<Set<string>>>();
  const anchorsOf = (file: string) => {
    const found = anchors.get(file) ?? src.read(file).then((text) => (text === null ? new Set<string>() : pageAnchors(file, text)));
    anchors.set(file, found);
    return found;
  };
  const report: LinkReport = { pages: 0, links: 0, broken: [], unchecked: [] };
  const outside = new Map<string, Array<{ file: string; line: number }>>();
  for (const file of src.pages) {
    const text = await src.read(file);
    const links = text === null ? [] : pageLinks(file, text);
    if (text !== null && /\.(md|mdx|markdown)$/i.test(file)) report.pages++;
    for (const { target, line } of links) {
      report.links++;
      if (skipped.test(target) || target.startsWith('//')) continue;
      if (/^https?:/i.test(target)) {
        const at = outside.get(target) ?? [];
        at.push({ file, line });
        outside.set(target, at);
        continue;
      }
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const problem = await internalProblem(known, file, target, opts.folder, anchorsOf);
      if (problem) report.broken.push({ file, line, link: target, reason: problem });
    }
  }
  const urls = [...outside.keys()];
  for (const url of urls.slice(opts.maxExternal)) for (const at of outside.get(url)!) report.unchecked.push({ ...at, link: url, reason: `not checked: more than ${opts.maxExternal} outside links` });
  await eachLimited(urls.slice(0, opts.maxExternal), opts.concurrency, async (url) => {
    const got = await opts.status(new URL(url)).catch((err: unknown): LinkStatus => ({ unreachable: (err as Error).message }));
    for (const at of outside.get(url)!) {
      if ('status' in got && got.status >= 400 && got.status < 500 && got.status !== 429) report.broken.push({ ...at, link: url, reason: `answers ${got.status}` });
      else if ('refused' in got) report.unchecked.push({ ...at, link: url, reason: `not checked: ${got.refused}` });
      else if ('unreachable' in got) report.unchecked.push({ ...at, link: url, reason: `no answer: ${got.unreachable}` });
      else if (got.status >= 500 || got.status === 429) report.unchecked.push({ ...at, link: url, reason: `answers ${got.status} (may be passing)` });
    }
  });
  const order = (a: BrokenLink, b: BrokenLink) => a.file.localeCompare(b.file) || a.line - b.line;
  report.broken.sort(order);
  report.unchecked.sort(order);
  return report;
}
