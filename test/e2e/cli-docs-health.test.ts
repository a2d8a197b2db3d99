import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { runDocent } from '../support/cli';
import { runDocsIngest } from '../../src/cli/docs-ingest';
import { deleteTestIndexes, miniDocsFolder, sameStack, startWorker, type RunningWorker } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';

// Docs health through the operator API and the compiled `docent` CLI: a crawl that outlasts the CLI's request timeout
// ends with its result (the CLI starts it, gets its id at once and follows it), and a domain that was ingested but is
// not followed shows its pages and passages, with a page browser.

const crawled = 'docs.slow-site.test';
const ingested = 'docs.ingested-only.test';
// Each answer of the site takes longer than this, so one request held for the whole crawl would be cut off.
const requestTimeoutMs = 1000;
const slowMs = 1500;
let site: http.Server;
let origin: string;
let gw: RunningGateway;
let worker: RunningWorker;
let operatorKey: string;

const pages: Record<string, string> = {
  '/guide/firing': '<h1>Firing</h1><p>Fire the bisque kiln slowly through the first hundred degrees so the water leaves the clay.</p>',
  '/guide/glazing': '<h1>Glazing</h1><p>Stir the glaze bucket for a full minute before you dip a pot, or the frit settles out.</p>',
};

beforeAll(async () => {
  site = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    // The second page takes longer still, so the crawl is seen half done (one page fetched of two) for a while.
    const send = (status: number, type: string, body: string) => setTimeout(() => res.writeHead(status, { 'content-type': type }).end(body), path === '/guide/glazing' ? 3 * slowMs : slowMs);
    if (path === '/robots.txt') return send(200, 'text/plain', 'User-agent: *\nAllow: /\n');
    if (path === '/sitemap.xml')
      return send(
        200,
        'application/xml',
        `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${Object.keys(pages)
          .map((p) => `<url><loc>${origin}${p}</loc></url>`)
          .join('')}</urlset>`,
      );
    const html = pages[path];
    if (!html) return send(404, 'text/plain', 'not found');
    send(200, 'text/html; charset=utf-8', `<!doctype html><html lang="en"><head><title>${path}</title></head><body><main>${html}</main></body></html>`);
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  // The site is on loopback: only the operator's allowed networks let the crawl reach it.
  gw = await startGateway({ DOCENT_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8' });
  worker = await startWorker(gw.deps.config);
  await runDocsIngest(gw.deps.config, { domain: ingested, source: miniDocsFolder, baseUrl: 'https://kiln.example' }, () => undefined);
  operatorKey = (await gw.deps.keys.create({ kind: 'operator', orgId: '*' })).key;
}, 180_000);

afterAll(async () => {
  if (gw) await fetch(`${gw.url}/v2/admin/docs/${crawled}/follow`, { method: 'DELETE', headers: { authorization: `Bearer ${operatorKey}` } });
  await worker?.stop();
  if (gw) await deleteTestIndexes(gw.deps.config);
  await gw?.stop();
  site?.closeAllConnections();
  await new Promise((r) => site?.close(r));
});

const api = (path: string, init: RequestInit = {}) => fetch(`${gw.url}${path}`, { ...init, headers: { authorization: `Bearer ${operatorKey}`, ...init.headers } });
const cli = (...args: string[]) =>
  runDocent(args, sameStack(gw.deps.config, { DOCENT_LOG_LEVEL: 'silent', DOCENT_API_URL: gw.url, DOCENT_OPERATOR_KEY: operatorKey, DOCENT_API_REQUEST_TIMEOUT_MS: String(requestTimeoutMs) }));

describe('docs health', () => {
  it('`docs ingest --sitemap` of a crawl that outlasts the request timeout ends with the crawl’s result', async () => {
    const run = await cli('docs', 'ingest', '--domain', crawled, '--sitemap', `${origin}/sitemap.xml`);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^sync sync_[0-9a-f]{24} queued$/m);
    // Followed while it ran: the pages fetched so far, from the crawl's heartbeat.
    expect(run.stdout).toMatch(/^crawling: 1\/2 pages fetched$/m);
    expect(run.stdout).toMatch(/^synced \w+: 2 pages, \d+ passages/m);
    // The crawl took longer than any one request may: no request was held for it.
    const status = (await (await api(`/v2/admin/docs/${crawled}`)).json()) as { followed: boolean; pages: number; last: { durationMs: number } };
    expect(status).toMatchObject({ followed: true, pages: 2 });
    expect(status.last.durationMs).toBeGreaterThan(requestTimeoutMs);
  }, 120_000);

  it('shows an ingested domain that nothing follows: pages, passages, the last ingest and each page’s passages', async () => {
    const res = await api(`/v2/admin/docs/${ingested}`);
    expect(res.status).toBe(200);
    const health = (await res.json()) as { followed: boolean; pages: number; passages: number; lastIngest: { status: string; pages: number; source: string } };
    expect(health).toMatchObject({ followed: false, lastIngest: { status: 'COMPLETED', pages: health.pages } });
    expect(health.pages).toBeGreaterThan(1);
    expect(health.passages).toBeGreaterThanOrEqual(health.pages);

    const first = (await (await api(`/v2/admin/docs/${ingested}/pages?limit=1`)).json()) as { pages: Array<{ path: string; passages: number }>; next: string };
    expect(first.pages).toHaveLength(1);
    const rest = (await (await api(`/v2/admin/docs/${ingested}/pages?limit=500&after=${encodeURIComponent(first.next)}`)).json()) as { pages: Array<{ path: string; passages: number }> };
    const all = [...first.pages, ...rest.pages];
    expect(all).toHaveLength(health.pages);
    expect(all.reduce((n, p) => n + p.passages, 0)).toBe(health.passages);
    const page = (await (await api(`/v2/admin/docs/${ingested}/page?path=${encodeURIComponent(all[0]!.path)}`)).json()) as { passages: Array<{ text: string }> };
    expect(page.passages).toHaveLength(all[0]!.passages);

    const printed = await cli('docs', 'status', '--domain', ingested);
    expect(printed.stdout).toContain(`${ingested} serves ${health.pages} pages, ${health.passages} passages`);
    expect(printed.stdout).toContain(`${ingested} is not followed`);
  });

  it('refuses bad page and sync requests in the error shape, and a domain with no docs is 404', async () => {
    for (const [path, code] of [
      [`/v2/admin/docs/${ingested}/pages?limit=0`, 400],
      [`/v2/admin/docs/${ingested}/pages?limit=many`, 400],
      [`/v2/admin/docs/${ingested}/page`, 400],
      [`/v2/admin/docs/${ingested}/page?path=no/such/page`, 404],
      [`/v2/admin/docs/${ingested}/syncs/not-an-id`, 400],
      [`/v2/admin/docs/${crawled}/syncs/sync_000000000000000000000000`, 404],
      ['/v2/admin/docs/docs.never-ingested.test', 404],
    ] as const) {
      const res = await api(path);
      expect([path, res.status]).toEqual([path, code]);
      expect(await res.json()).toEqual({ error: expect.any(String), code: code === 400 ? 'invalid_argument' : 'not_found' });
    }
    // Not followed: there is nothing to sync.
    expect((await api(`/v2/admin/docs/${ingested}/syncs`, { method: 'POST' })).status).toBe(404);
  });
});
