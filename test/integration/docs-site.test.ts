import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { docsSyncCommand } from '../../src/cli/docs-sync';
import { docsSyncStatus, followDocs, syncDocsNow, unfollowDocs, type DocsSyncSchedules } from '../../src/docs/sync-schedule';
import { createEsClient } from '../../src/search/es-client';
import { docsAlias } from '../../src/search/docs-index';
import { temporalConnectionOptions, temporalDataConverter } from '../../src/temporal/connection';
import { testConfig } from '../support/config';
import { deleteTestIndexes, sameStack, startWorker, type RunningWorker } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';
import { sseChunks, v2Body } from '../support/http';

const domain = 'docs.site.test';
let site: http.Server;
let origin: string;
let config: ReturnType<typeof testConfig>;
let worker: RunningWorker;
let gw: RunningGateway;
let connection: Connection;
let schedules: DocsSyncSchedules;
let key: string;
const es = createEsClient(testConfig().elasticsearch);

// Every page carries the chrome a docs generator adds: none of it may reach the index.
const chrome = (title: string, main: string) => `<!doctype html><html><head><title>${title} | Kiln Docs</title></head><body>
<header><a href="/">Kiln Docs</a><nav><a href="/pricing">Pricing and bananas</a><a href="/blog">Blog</a></nav></header>
<aside class="sidebar"><ul><li><a href="/guide/kiln-care">Kiln care</a></li><li><a href="/guide/glazes">Glazes</a></li><li><a href="/">Mango overview</a></li></ul></aside>
<main><article>${main}</article></main>
<footer><p>Copyright 2026 Papaya Ceramics Ltd. All rights reserved.</p><a href="/privacy">Privacy</a></footer></body></html>`;

const pages: Record<string, string> = {
  '/': chrome(
    'Overview',
    `<h1>Kiln overview</h1><p>This site explains how to look after an electric kiln for pottery: its care, its shelves and the glazes that suit it.</p><p>Start with kiln care if the kiln is new to you, then read about glazes before the first glaze firing.</p>`,
  ),
  '/guide/kiln-care': chrome(
    'Kiln care',
    `<h1>Kiln care</h1><p>Vacuum the heating elements of the kiln every month, so that dust never bakes onto them and shortens their life.</p>
<h2 id="cleaning-shelves"><a class="anchor" href="#cleaning-shelves">#</a>Cleaning shelves</h2><p>Scrape glaze drips off the kiln shelves with a carbide scraper, then brush on fresh kiln wash before the next firing.</p>
<pre><code class="language-sh">kiln clean --shelves</code></pre>
<h2 id="elements">Replacing elements</h2><p>Replace the elements once a firing takes thirty percent longer than it did when they were new.</p>`,
  ),
  '/guide/glazes': chrome(
    'Glazes',
    `<h1>Glazes</h1><p>The celadon glaze turns pale green in a reduction atmosphere, while an electric kiln fires it in oxidation.</p><h2 id="testing">Testing a glaze</h2><p>Fire a test tile of every new glaze batch before you glaze a whole load of pots.</p>`,
  ),
  '/internal/secret-plans': chrome('Plans', `<h1>Secret plans</h1><p>The confidential walrus roadmap for next year lives here and must never be crawled.</p>`),
};
const requests: Array<{ path: string; status: number; conditional: boolean }> = [];

beforeAll(async () => {
  site = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const conditional = Boolean(req.headers['if-none-match']);
    const answer = (status: number, type: string, body: string, etag?: string) => {
      requests.push({ path, status, conditional });
      res.writeHead(status, { 'content-type': type, ...(etag ? { etag } : {}) });
      res.end(status === 304 ? undefined : body);
    };
    if (path === '/robots.txt') return answer(200, 'text/plain', 'User-agent: *\nDisallow: /internal/\n');
    if (path === '/sitemap.xml') {
      const locs = Object.keys(pages).map((p) => `<url><loc>${origin}${p}</loc></url>`);
      return answer(200, 'application/xml', `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs.join('')}</urlset>`);
    }
    const html = pages[path];
    if (!html) return answer(404, 'text/plain', 'not found');
    const etag = `"${createHash('sha1').update(html).digest('hex')}"`;
    if (req.headers['if-none-match'] === etag) return answer(304, 'text/html', '', etag);
    answer(200, 'text/html; charset=utf-8', html, etag);
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  // The test site is on loopback: the outbound rules refuse it unless the operator allows that network.
  config = testConfig({ DOCENT_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8' });
  worker = await startWorker(config);
  gw = await startGateway(sameStack(config));
  key = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain })).key;
  connection = await Connection.connect(temporalConnectionOptions(config.temporal));
  schedules = {
    temporal: new Client({ connection, namespace: config.temporal.namespace, dataConverter: temporalDataConverter(config.temporal) }),
    taskQueuePrefix: config.temporal.taskQueuePrefix,
    gitBaseUrl: 'https://github.com',
  };
});

afterAll(async () => {
  for (const d of [domain, 'docs.refused.test']) await unfollowDocs(schedules, d).catch(() => undefined);
  await connection?.close();
  await gw?.stop();
  await worker?.stop();
  await deleteTestIndexes(config);
  await es.close();
  site?.closeAllConnections();
  await new Promise((r) => site?.close(r));
});

const search = async (query: string) => {
  const r = await fetch(`${gw.url}/discovery/v1/search/${domain}/results`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, pageSize: 10 }),
  });
  expect(r.status).toBe(200);
  return ((await r.json()) as { results: Array<{ path: string; url: string; content: string }> }).results;
};

const indexedText = async () => {
  const index = Object.keys(await es.indices.getAlias({ name: docsAlias(config.elasticsearch.indexPrefix, domain) }))[0]!;
  const r = await es.search<{ text: string; title: string; headings: string[]; path: string }>({ index, size: 1000, query: { match_all: {} } });
  return r.hits.hits.map((h) => h._source!);
};

describe('a published site ingested from its sitemap', () => {
  it('crawls the pages robots.txt allows and indexes their main content only', async () => {
    const printed: string[] = [];
    expect(await docsSyncCommand('ingest-sitemap', ['--domain', domain, '--sitemap', `${origin}/sitemap.xml`], config, (l) => printed.push(l))).toBe(0);
    expect(printed.at(-1)).toMatch(/^synced [0-9a-f]{12}: 3 pages, \d+ passages \(3 pages re-embedded, 0 removed.*; 1 pages excluded by robots\.txt$/);
    expect(requests.some((r) => r.path.startsWith('/internal/'))).toBe(false);

    const care = await search('how often should I vacuum the heating elements?');
    expect(care[0]).toMatchObject({ path: 'guide/kiln-care', url: `${origin}/guide/kiln-care` });
    const shelves = await search('remove glaze drips from shelves');
    expect(shelves[0]!.url).toBe(`${origin}/guide/kiln-care#cleaning-shelves`);
    expect(shelves[0]!.content).toContain('carbide scraper');

    const docs = await indexedText();
    expect(docs.map((d) => d.path).sort()).toEqual(expect.arrayContaining(['guide/glazes', 'guide/kiln-care', 'index']));
    const all = JSON.stringify(docs);
    for (const chromeText of ['bananas', 'Papaya', 'Mango', 'Privacy', 'walrus', 'Secret plans']) expect(all).not.toContain(chromeText);
    expect(docs.find((d) => d.path === 'guide/kiln-care')!.title).toBe('Kiln care');

    // The assistant answers from the page's main content and cites the page's own anchor.
    const answer = await fetch(`${gw.url}/discovery/v2/assistant/${domain}/message`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(v2Body('How do I get glaze drips off my kiln shelves?')),
    });
    expect(answer.status).toBe(200);
    const chunks = sseChunks(await answer.text());
    const text = chunks
      .filter((c) => c.type === 'text-delta')
      .map((c) => c.delta)
      .join('');
    expect(text).toContain('carbide scraper');
    expect(chunks.filter((c) => c.type === 'source-url')[0]?.url).toBe(`${origin}/guide/kiln-care#cleaning-shelves`);
  });

  it('re-fetches with ETag on the next crawl and re-embeds only the page that changed', async () => {
    pages['/guide/glazes'] = chrome('Glazes', `<h1>Glazes</h1><p>The tenmoku glaze breaks rust brown where it thins over the rims of bowls.</p>`);
    requests.length = 0;
    const r = await syncDocsNow(schedules, domain);
    expect(r).toMatchObject({ pages: 3, pagesReembedded: 1, pagesRemoved: 0, unchanged: false, pagesExcluded: 1 });
    const pageFetches = requests.filter((q) => !['/robots.txt', '/sitemap.xml'].includes(q.path));
    expect(pageFetches.every((q) => q.conditional)).toBe(true);
    expect(
      pageFetches
        .filter((q) => q.status === 304)
        .map((q) => q.path)
        .sort(),
    ).toEqual(['/', '/guide/kiln-care']);
    expect((await search('tenmoku rust brown rims'))[0]!.path).toBe('guide/glazes');
    expect(JSON.stringify(await indexedText())).not.toContain('celadon');
    const status = await docsSyncStatus(schedules, domain);
    expect(status.source).toEqual({ domain, sitemap: `${origin}/sitemap.xml` });
  });

  it('refuses a site on a network the outbound rules do not allow', async () => {
    await followDocs(schedules, { domain: 'docs.refused.test', sitemap: 'http://10.255.255.1/sitemap.xml' }, 600_000, { firstNow: false });
    await expect(syncDocsNow(schedules, 'docs.refused.test')).rejects.toThrow(/the site is refused: .*private or reserved address.*DOCENT_ALLOW_PRIVATE_NETWORKS/);
  });
});
