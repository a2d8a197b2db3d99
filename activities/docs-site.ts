import { createHash } from 'node:crypto';
import { ApplicationFailure, heartbeat } from '@temporalio/activity';
import robotsParser from 'robots-parser';
import { FetchRefused, pinnedGet, type PinnedGetOptions } from '../src/net/pinned-get';
import { OutboundRefused, type OutboundGuard } from '../src/net/outbound';
import type { SiteDocsSource } from '../workflows/docs-sync-contract';

/** Bounds of one crawl: a site cannot make the worker fetch, hold or wait for more than this. */
export interface CrawlLimits {
  /** Pages fetched at the same time. */
  concurrency: number;
  maxPages: number;
  maxPageBytes: number;
  timeoutMs: number;
}

/** The user agent robots.txt rules are matched against. */
export const CRAWLER_AGENT = 'docent-crawler';

/** What the last crawl learnt of a page: its content version and the validators for a conditional GET. */
export interface PageValidators {
  etag?: string;
  lastModified?: string;
}

export interface SiteListing {
  /** Each page as a Markdown file name and the hash of its Markdown. */
  files: Array<{ file: string; version: string }>;
  read(file: string): Promise<string>;
  validators: Record<string, PageValidators>;
  errors: string[];
  excluded: number;
}

const maxSitemaps = 50;

function fail(type: 'InvalidDocsSource' | 'RepositoryUrlRefused' | 'DocsSourceNotFound', message: string): never {
  throw ApplicationFailure.create({ type, message, nonRetryable: true });
}

/** `https://site/guide/install.html` → `guide/install.md`; `https://site/guide/` → `guide/index.md`. */
export function pageFileOf(url: URL): string {
  let p = decodeURIComponent(url.pathname).replace(/^\/+/, '');
  if (p === '' || p.endsWith('/')) p += 'index';
  return `${p.replace(/\.(html?|php|aspx?)$/i, '')}.md`;
}

/** The HTML tools load with the first site listed, not with every worker and gateway (about 0.1 s of CPU each). */
function htmlTools() {
  const { DOMParser } = require('linkedom') as typeof import('linkedom');
  const { htmlToMarkdown } = require('../src/docs/html-to-markdown') as typeof import('../src/docs/html-to-markdown');
  return { DOMParser, htmlToMarkdown };
}
type HtmlTools = ReturnType<typeof htmlTools>;

/** The `<loc>`s of a sitemap: pages of a `urlset`, or the sitemaps of a `sitemapindex`. */
function readSitemap({ DOMParser }: HtmlTools, xml: string): { pages: string[]; sitemaps: string[] } {
  const doc = new DOMParser().parseFromString(xml, 'text/xml');
  const locs = (parent: string) =>
    Array.from(doc.querySelectorAll(`${parent} > loc`) as Iterable<{ textContent: string | null }>)
      .map((n) => (n.textContent ?? '').trim())
      .filter(Boolean);
  return { pages: locs('url'), sitemaps: locs('sitemap') };
}

/**
 * Lists a site from its sitemap and fetches its pages (robots.txt obeyed, same origin only, concurrency and sizes
 * bounded, every address checked by the outbound guard). A page known from the last crawl is asked for with its
 * ETag/Last-Modified; a 304 keeps its version, so it is neither converted nor embedded again.
 */
export async function listSite(
  input: SiteDocsSource,
  guard: OutboundGuard,
  previous: { pages: Record<string, string>; validators: Record<string, PageValidators> } | undefined,
  limits: CrawlLimits,
): Promise<SiteListing> {
  const tools = htmlTools();
  let sitemap: URL;
  try {
    sitemap = new URL(input.sitemap);
  } catch {
    fail('InvalidDocsSource', `the sitemap "${input.sitemap}" is not a URL`);
  }
  const get = async (url: URL, opts: Partial<PinnedGetOptions> = {}) => {
    try {
      return await pinnedGet(guard, url, { maxBytes: limits.maxPageBytes, timeoutMs: limits.timeoutMs, ...opts });
    } catch (err) {
      if (err instanceof OutboundRefused && !err.unresolved) fail('RepositoryUrlRefused', `the site is refused: ${err.message}`);
      throw err;
    }
  };

  const robotsUrl = new URL('/robots.txt', sitemap.origin);
  const robotsRes = await get(robotsUrl).catch((err: unknown) => {
    // A robots.txt that redirects off the site cannot be read here: crawling nothing is the safe reading (RFC 9309).
    if (err instanceof FetchRefused) fail('DocsSourceNotFound', `cannot read ${robotsUrl}: ${err.message}`);
    throw err;
  });
  // RFC 9309: a missing robots.txt (4xx) allows everything; a server error means crawling nothing yet (retried).
  if (robotsRes.status >= 500) throw new Error(`${robotsUrl} answered HTTP ${robotsRes.status}`);
  const robots = robotsParser(robotsUrl.toString(), robotsRes.status === 200 ? robotsRes.body.toString('utf8') : '');

  const urls = new Map<string, URL>();
  const queue = [sitemap];
  for (let read = 0; queue.length > 0 && read < maxSitemaps; read++) {
    const at = queue.shift()!;
    const res = await get(at, { maxBytes: limits.maxPageBytes * 10 });
    if (res.status === 404 && at === sitemap) fail('DocsSourceNotFound', `no sitemap at ${sitemap}`);
    if (res.status !== 200) throw new Error(`${at} answered HTTP ${res.status}`);
    const found = readSitemap(tools, res.body.toString('utf8'));
    for (const loc of found.sitemaps) {
      const u = new URL(loc, at);
      if (u.origin === sitemap.origin) queue.push(u);
    }
    for (const loc of found.pages) {
      const u = new URL(loc, at);
      u.hash = '';
      u.search = '';
      if (u.origin === sitemap.origin && urls.size < limits.maxPages) urls.set(pageFileOf(u), u);
    }
  }

  const allowed = [...urls].filter(([, u]) => robots.isAllowed(u.toString(), CRAWLER_AGENT) !== false);
  const files: SiteListing['files'] = [];
  const markdown = new Map<string, string>();
  const validators: Record<string, PageValidators> = {};
  const errors: string[] = [];
  let next = 0;
  let done = 0;
  const crawlOne = async ([file, url]: [string, URL]) => {
    const before = previous?.pages[file];
    const known = before ? previous?.validators[file] : undefined;
    const headers: Record<string, string> = { accept: 'text/html' };
    if (known?.etag) headers['if-none-match'] = known.etag;
    if (known?.lastModified) headers['if-modified-since'] = known.lastModified;
    // A page that fails keeps its last version (and so its passages) until it is readable again.
    const keepBefore = (why: string) => {
      errors.push(`${url}: ${why}`);
      if (before) {
        files.push({ file, version: before });
        if (known) validators[file] = known;
      }
    };
    try {
      const res = await get(url, { headers });
      if (res.status === 304 && before) {
        files.push({ file, version: before });
        validators[file] = known ?? {};
        return;
      }
      if (res.status !== 200) return keepBefore(`HTTP ${res.status}`);
      if (!/html/i.test(String(res.headers['content-type'] ?? 'text/html'))) return keepBefore(`not an HTML page (${res.headers['content-type']})`);
      const page = tools.htmlToMarkdown(res.body.toString('utf8'), url.toString());
      if (!page) return keepBefore('no readable content');
      markdown.set(file, page.markdown);
      files.push({ file, version: createHash('sha256').update(page.markdown).digest('hex').slice(0, 20) });
      validators[file] = { ...(res.headers.etag ? { etag: res.headers.etag } : {}), ...(res.headers['last-modified'] ? { lastModified: res.headers['last-modified'] } : {}) };
    } catch (err) {
      if (err instanceof ApplicationFailure) throw err;
      keepBefore(err instanceof FetchRefused || err instanceof OutboundRefused ? err.message : `unreachable: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  const worker = async () => {
    while (next < allowed.length) {
      await crawlOne(allowed[next++]!);
      heartbeat({ phase: 'crawling', crawled: ++done, pages: allowed.length, errors: errors.length });
    }
  };
  await Promise.all(Array.from({ length: Math.min(limits.concurrency, allowed.length) }, worker));
  files.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return {
    files,
    validators,
    errors,
    excluded: urls.size - allowed.length,
    read: async (file) => {
      const text = markdown.get(file);
      if (text === undefined) throw new Error(`page ${file} was not fetched in this crawl`);
      return text;
    },
  };
}
