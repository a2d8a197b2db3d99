import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import type { BrowserContext, Page } from 'playwright-core';
import type { ThreadDoc } from '../../src/assistant/threads';
import { runDocsIngest } from '../../src/cli/docs-ingest';
import { launchChromium, PageErrors } from '../support/chromium';
import { runDocent } from '../support/cli';
import { poll } from '../support/poll';
import { deleteTestIndexes, startWorker } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';
import { startScriptedModel, type ChatRequest, type ScriptedModel, type ScriptedTurn, modelSettings } from '../support/scripted-model';

// The embeddable assistant (widget.js) in Debian's chromium, on static docs pages served from origins other than the
// gateway's, against the real gateway, Temporal-ingested docs in Elasticsearch and MongoDB; only the model is a double.

const domain = 'docs.kiln-widget.test';
const answer = ['To install kiln in CI, ', 'run `kiln ci` ', 'for a clean, repeatable install [1].'];
// What a model could produce when it quotes a page holding markup, or when a prompt injection steers it.
const quotedMarkup = 'The page shows <img src=x onerror="window.__pwned=\'page\'"> next to each badge.';
const scriptAnswer = 'Here it is: <script>window.__pwned="model"</script> **done** [run](javascript:window.__pwned="link")\n\n```sh\nkiln ci --frozen\n```\n';
let model: ScriptedModel;
let gw: RunningGateway;
let docsDir: string;
let profileDir: string;
let browser: BrowserContext;
let allowedSite: StaticSite;
let refusedSite: StaticSite;
let assistantKey: string;
let adminKey: string;

interface StaticSite {
  origin: string;
  close(): Promise<void>;
}

/** A docs site of its own origin: one page with the script tag, a site button, and CSS that must not reach the panel. */
async function serveDocsSite(html: (origin: string) => string, headers: Record<string, string> = {}): Promise<StaticSite> {
  const app = Fastify({ forceCloseConnections: true });
  let origin = '';
  app.get('/guide/', (_req, reply) => reply.type('text/html').headers(headers).send(html(origin)));
  await app.listen({ port: 0, host: '127.0.0.1' });
  origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return { origin, close: () => app.close() };
}

const sitePage = (scriptTag: string) => `<!doctype html>
<html><head><title>Kiln docs</title><style>button { background: rgb(255, 0, 0) !important; } dialog { display: none !important; }</style></head>
<body><h1>Kiln guide</h1><button id="site-button">Site search</button><p>Bake static sites.</p>${scriptTag}</body></html>`;

const widgetTag = () =>
  `<script src="${gw.url}/widget.js" data-domain="${domain}" data-key="${assistantKey}" data-title="Ask Kiln AI" data-accent="#7c3aed" ` +
  `data-starters="How do I install kiln in CI?|What do the badges show?" data-filter-version="2" defer></script>`;

const lastUser = (req: ChatRequest) => JSON.stringify(req.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');

function script(req: ChatRequest): ScriptedTurn {
  const q = lastUser(req);
  if (q.includes('raw tags')) return { text: scriptAnswer };
  if (q.includes('badges')) return { text: quotedMarkup };
  return { text: answer, chunkDelayMs: 250 };
}

beforeAll(async () => {
  model = await startScriptedModel(script);
  gw = await startGateway({ ...modelSettings(model) });
  const c = gw.deps.config;
  docsDir = await mkdtemp(path.join(os.tmpdir(), 'docent-widget-docs-'));
  await mkdir(path.join(docsDir, 'guides'));
  await writeFile(
    path.join(docsDir, 'guides/install.md'),
    '---\ntitle: Install kiln\nversion: "2"\n---\n\n# Install kiln\n\n## Clean installs in CI\n\nIn CI, install kiln with `kiln ci`: it installs exactly the locked versions, a clean and repeatable install.\n',
  );
  await writeFile(
    path.join(docsDir, 'guides/badges.md'),
    '---\ntitle: Status badges\nversion: "2"\n---\n\n# Status badges\n\n## What the badges show\n\nThe badges show the bake status. <img src=x onerror="window.__pwned=\'page\'"> Each badge links to its bake log.\n',
  );
  const worker = await startWorker(c);
  try {
    await runDocsIngest(c, { domain, source: docsDir, baseUrl: 'https://kiln.test' }, () => undefined);
  } finally {
    await worker.stop();
  }
  allowedSite = await serveDocsSite(() => sitePage(widgetTag()));
  refusedSite = await serveDocsSite(() => sitePage(widgetTag()));
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'kiln', orgId: 'acme', repository: 'acme/kiln', ref: 'main', domain, allowedOrigins: [allowedSite.origin] });
  assistantKey = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain })).key;
  adminKey = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'kiln' })).key;

  ({ browser, profileDir } = await launchChromium({
    viewport: { width: 1280, height: 800 },
    permissions: ['clipboard-read', 'clipboard-write'],
  }));
}, 240_000);

afterAll(async () => {
  await browser?.close();
  if (gw) await deleteTestIndexes(gw.deps.config);
  await gw?.stop();
  await Promise.all([model?.close(), allowedSite?.close(), refusedSite?.close()]);
  await Promise.all([docsDir, profileDir].filter(Boolean).map((d) => rm(d, { recursive: true, force: true })));
});

// A page that threw (an uncaught error or rejection) fails the test that opened or used it.
const pageErrors = new PageErrors();
afterEach(() => expect(pageErrors.take()).toEqual([]));

async function openSite(origin: string): Promise<Page> {
  const page = await browser.newPage();
  pageErrors.watch(page, origin);
  await page.goto(`${origin}/guide/`);
  await page.locator('docent-assistant .launcher').waitFor();
  return page;
}

// Page-side predicates are strings: the test compiles without the DOM library.
const inPanel = (expr: string) => `(() => { const root = document.querySelector('docent-assistant').shadowRoot; return ${expr}; })()`;
const answersDone = (n: number) => inPanel(`root.querySelectorAll('.msg.assistant').length === ${n} && root.querySelector('dialog').dataset.status === 'ready'`);
const answer$ = (page: Page) => page.locator('docent-assistant .msg.assistant');

async function ask(page: Page, question: string) {
  await page.locator('docent-assistant textarea[name=question]').fill(question);
  await page.keyboard.press('Enter');
}

describe('the widget on a docs site the project allows', () => {
  let page: Page;
  beforeAll(async () => {
    page = await openSite(allowedSite.origin);
  });
  afterAll(() => page?.close());

  it("shows the site's button styled by the widget's own CSS, not the site's", async () => {
    const launcher = page.locator('docent-assistant .launcher');
    expect(await launcher.getAttribute('aria-label')).toBe('Ask Kiln AI (opens the docs assistant)');
    const background = (el: unknown) => (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(el).backgroundColor;
    expect(await launcher.evaluate(background)).toBe('rgb(124, 58, 237)');
    expect(await page.locator('#site-button').evaluate(background)).toBe('rgb(255, 0, 0)');
  });

  it('opens with Ctrl+K, keeps focus inside while open, and closes with Esc back to the button', async () => {
    await page.keyboard.press('Control+k');
    await page.waitForFunction(inPanel(`root.querySelector('dialog').open && root.activeElement?.name === 'question'`));
    for (let i = 0; i < 8; i++) {
      await page.keyboard.press(i % 3 === 2 ? 'Shift+Tab' : 'Tab');
      expect(await page.evaluate(inPanel(`document.activeElement === root.host && root.querySelector('dialog').contains(root.activeElement)`))).toBe(true);
    }
    await page.keyboard.press('Escape');
    await page.waitForFunction(inPanel(`!root.querySelector('dialog').open && root.activeElement?.classList.contains('launcher')`));
    expect(await page.locator('docent-assistant dialog').getAttribute('aria-labelledby')).toBe('docent-title');
  });

  it('streams a cited answer to a starter question, sending the configured filter', async () => {
    await page.locator('docent-assistant .launcher').click();
    const sent = page.waitForRequest((r) => r.url().endsWith(`/discovery/v2/assistant/${domain}/message`) && r.method() === 'POST');
    await page.getByRole('button', { name: 'How do I install kiln in CI?' }).click();
    expect((await sent).postDataJSON()).toMatchObject({ fp: 'anonymous', filter: { version: '2' }, currentPath: '/guide/' });
    // Part of the answer is on screen while the stream is still open.
    await page.waitForFunction(
      inPanel(`(() => {
      const text = root.querySelector('.msg.assistant .answer')?.textContent ?? '';
      return root.querySelector('dialog').dataset.status === 'streaming' && text.length > 0 && !text.endsWith('[1].');
    })()`),
    );
    await page.waitForFunction(answersDone(1));
    expect(await answer$(page).first().locator('.answer').textContent()).toBe(answer.join('').replaceAll('`', ''));
    expect(await answer$(page).first().locator('.answer code').textContent()).toBe('kiln ci');
    // [1] links to the cited page and heading, as does the source list.
    const cite = answer$(page).first().locator('a.cite');
    expect(await cite.textContent()).toBe('[1]');
    expect(await cite.getAttribute('href')).toBe('https://kiln.test/guides/install#clean-installs-in-ci');
    const firstSource = answer$(page).first().locator('.sources a').first();
    expect(await firstSource.getAttribute('href')).toBe('https://kiln.test/guides/install#clean-installs-in-ci');
    expect(await firstSource.textContent()).toContain('Install kiln');
    await mkdir('test-results', { recursive: true });
    await page.screenshot({ path: 'test-results/widget.png' });
  });

  it('keeps a follow-up in the same thread, for this tab', async () => {
    await ask(page, 'And how do I install kiln locally?');
    await page.waitForFunction(answersDone(2));
    const saved = JSON.parse((await page.evaluate(`sessionStorage.getItem('docent-assistant:${domain}')`)) as string) as { threadId: string };
    expect(saved.threadId).toMatch(/^thr_/);
    const threads = await gw.deps.mongo.db.collection<ThreadDoc>('threads').find({ domain }).toArray();
    expect(threads.map((t) => t._id)).toEqual([saved.threadId]);
    expect(threads[0]!.turns.map((t) => t.userMessage)).toEqual(['How do I install kiln in CI?', 'And how do I install kiln locally?']);
    // A reload (another docs page in the same tab) shows the conversation and continues the thread.
    await page.reload();
    await page.keyboard.press('Control+k');
    expect(await answer$(page).count()).toBe(2);
  });

  it('reports the cited source a reader opens, which the search analytics show with the question and its hits', async () => {
    // The docs pages themselves are not served in this test: the opened tab gets a stand-in.
    await browser.route('https://kiln.test/**', (r) => r.fulfill({ contentType: 'text/html', body: '<title>Install kiln</title>' }));
    const first = answer$(page).first();
    const hits = await first.locator('.sources a').count();
    const popup = page.waitForEvent('popup');
    await first.locator('.sources a').first().click();
    await (await popup).close();
    type Row = { query: string; searches: number; hits: number; clicks: number; topClickedPage: { path: string; clicks: number } | null; via: Record<string, number> };
    const rowOf = async (question: string) => {
      const r = await fetch(`${gw.url}/v2/agent/kiln/analytics/searches`, { headers: { authorization: `Bearer ${adminKey}` } });
      expect(r.status).toBe(200);
      return ((await r.json()) as { queries: Row[] }).queries.find((q) => q.query === question);
    };
    const row = await poll(
      'the clicked question in /searches',
      () => rowOf('How do I install kiln in CI?'),
      (q) => q?.clicks === 1,
    );
    expect(row).toMatchObject({ searches: 1, hits, clicks: 1, topClickedPage: { path: 'guides/install', clicks: 1 }, via: { api: 0, mcp: 0, assistant: 1 } });
    expect(hits).toBeGreaterThan(0);
    expect(await rowOf('And how do I install kiln locally?')).toMatchObject({ searches: 1, clicks: 0 });
  });

  it('sends a thumbs down with a comment, which the project analytics show', async () => {
    const first = answer$(page).first();
    await first.getByRole('button', { name: 'Not helpful' }).click();
    await first.getByText('Thanks for the feedback.').waitFor();
    expect(await first.getByRole('button', { name: 'Not helpful' }).getAttribute('aria-pressed')).toBe('true');
    await first.locator('textarea[name=comment]').fill('It does not say which kiln version');
    await first.getByRole('button', { name: 'Send', exact: true }).click();
    await first.getByText('Thanks, comment sent.').waitFor();
    const r = await fetch(`${gw.url}/v2/agent/kiln/analytics?since=1d`, { headers: { authorization: `Bearer ${adminKey}` } });
    expect(r.status).toBe(200);
    const report = (await r.json()) as { volume: { ratedDown: number }; downRated: Array<{ question: string; comment?: string }> };
    expect(report.volume.ratedDown).toBe(1);
    expect(report.downRated).toEqual([expect.objectContaining({ question: 'How do I install kiln in CI?', comment: 'It does not say which kiln version' })]);
  });

  it('shows markup from a docs page and a script in a model answer as text, and runs neither', async () => {
    await ask(page, 'What do the badges show?');
    await page.waitForFunction(answersDone(3));
    await ask(page, 'Show the badges as raw tags');
    await page.waitForFunction(answersDone(4));
    const [quoted, scripted] = [answer$(page).nth(2), answer$(page).nth(3)];
    // Earlier answers are not rebuilt while new ones stream: the rating given above is still shown.
    expect(await answer$(page).first().getByRole('button', { name: 'Not helpful' }).getAttribute('aria-pressed')).toBe('true');
    expect(await quoted.locator('.answer').textContent()).toContain('<img src=x onerror="window.__pwned=\'page\'">');
    expect(await scripted.locator('.answer').textContent()).toContain('<script>window.__pwned="model"</script>');
    expect(await scripted.locator('.answer strong').textContent()).toBe('done');
    expect(await page.locator('docent-assistant .answer img, docent-assistant .answer script').count()).toBe(0);
    // The javascript: link keeps its text and loses its target.
    const link = scripted.locator('.answer a', { hasText: 'run' });
    expect(await link.getAttribute('href')).toBeNull();
    await link.click();
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
  });

  it('puts a copy button on code blocks', async () => {
    const code = answer$(page).nth(3).locator('.code');
    expect(await code.locator('pre code').textContent()).toBe('kiln ci --frozen\n');
    await code.getByRole('button', { name: 'Copy code' }).click();
    await code.getByText('Copied').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe('kiln ci --frozen\n');
  });

  it('follows prefers-color-scheme and prefers-reduced-motion', async () => {
    const panel = page.locator('docent-assistant dialog');
    const look = (el: unknown) => {
      const style = (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string; animationName: string } }).getComputedStyle(el);
      return { background: style.backgroundColor, animation: style.animationName };
    };
    await page.emulateMedia({ colorScheme: 'light', reducedMotion: 'no-preference' });
    expect(await panel.evaluate(look)).toEqual({ background: 'rgb(255, 255, 255)', animation: 'rise' });
    await page.emulateMedia({ colorScheme: 'dark', reducedMotion: 'reduce' });
    expect(await panel.evaluate(look)).toEqual({ background: 'rgb(17, 24, 39)', animation: 'none' });
  });
});

describe('the widget on a site the project does not allow', () => {
  it('says so in the panel instead of failing silently', async () => {
    const page = await openSite(refusedSite.origin);
    try {
      await page.keyboard.press('Control+k');
      await ask(page, 'How do I install kiln in CI?');
      const alert = page.locator('docent-assistant [role=alert]');
      await alert.waitFor();
      expect(await alert.textContent()).toBe(
        `This site (${refusedSite.origin}) may not use the assistant of ${domain}: its origin is not among the project’s allowed origins. The docs team can add it.`,
      );
      expect(await answer$(page).count()).toBe(0);
    } finally {
      await page.close();
    }
  });

  it('answers there once the docs team adds the origin to the existing project (docent project update --origin)', async () => {
    // The organization's operator, through the gateway's operator API, as the CLI reaches it.
    const operator = (await gw.deps.keys.create({ kind: 'operator', orgId: 'acme' })).key;
    const update = (...origins: string[]) => runDocent(['project', 'update', 'kiln', ...origins.flatMap((o) => ['--origin', o]), '--json'], { DOCENT_API_URL: gw.url, DOCENT_OPERATOR_KEY: operator });
    const added = await update(allowedSite.origin, refusedSite.origin);
    expect(added).toMatchObject({ code: 0 });
    expect(JSON.parse(added.stdout)).toMatchObject({ allowedOrigins: [allowedSite.origin, refusedSite.origin] });
    const page = await openSite(refusedSite.origin);
    try {
      await page.keyboard.press('Control+k');
      await ask(page, 'How do I install kiln in CI?');
      await answer$(page).first().waitFor();
      await poll(
        'the answer',
        () => answer$(page).first().textContent(),
        (t) => (t ?? '').length > 10,
      );
      expect(await page.locator('docent-assistant').textContent()).not.toContain('may not use the assistant');
    } finally {
      await page.close();
      expect(await update(allowedSite.origin)).toMatchObject({ code: 0 });
    }
  });
});

describe('the widget files', () => {
  it('serves /widget.js and /widget.mjs to any origin, compressed to at most 60 KB with gzip, cached for five minutes with an ETag', async () => {
    for (const file of ['/widget.js', '/widget.mjs']) {
      const r = await fetch(gw.url + file, { headers: { origin: 'https://elsewhere.test', 'accept-encoding': 'br, gzip' } });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-encoding')).toBe('br');
      expect(r.headers.get('vary')).toContain('accept-encoding');
      expect(r.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(r.headers.get('access-control-allow-origin')).toBe('*');
      expect(r.headers.get('cache-control')).toContain('max-age=300');
      const etag = r.headers.get('etag')!;
      expect(etag).toBeTruthy();
      expect(await r.text()).not.toContain('docent_asst_');
      expect((await fetch(gw.url + file, { headers: { 'accept-encoding': 'br, gzip', 'if-none-match': etag } })).status).toBe(304);
      const gzipped = await fetch(gw.url + file, { headers: { 'accept-encoding': 'gzip' } });
      expect(gzipped.headers.get('content-encoding')).toBe('gzip');
      // Issue 24 caps the widget at 60 KB gzipped; content-length is the size on the wire.
      expect(Number(gzipped.headers.get('content-length'))).toBeLessThanOrEqual(60_000);
    }
  });

  it("tells any page whether its origin may call the domain's assistant", async () => {
    const check = async (headers: Record<string, string>, forDomain = domain) => {
      const r = await fetch(`${gw.url}/discovery/v1/assistant/${forDomain}/origin`, { headers });
      expect(r.headers.get('access-control-allow-origin')).toBe(headers.origin ? '*' : null);
      return r.json();
    };
    expect(await check({ origin: allowedSite.origin })).toEqual({ origin: allowedSite.origin, allowed: true });
    expect(await check({ origin: refusedSite.origin })).toEqual({ origin: refusedSite.origin, allowed: false });
    expect(await check({ origin: allowedSite.origin }, 'docs.unknown.test')).toEqual({ origin: allowedSite.origin, allowed: false });
    expect(await check({})).toEqual({ origin: '', allowed: true });
  });

  it('is styled on a site whose Content-Security-Policy allows no inline styles', async () => {
    const csp = () => `default-src 'none'; script-src ${gw.url}; connect-src ${gw.url}; style-src 'none'`;
    const site = await serveDocsSite(() => `<!doctype html><body><p>Strict docs</p><script src="${gw.url}/widget.js" data-domain="${domain}" data-key="${assistantKey}" defer></script></body>`, {
      'content-security-policy': csp(),
    });
    const page = await browser.newPage();
    pageErrors.watch(page, site.origin);
    const violations: string[] = [];
    page.on('console', (m) => {
      if (m.text().includes('Content Security Policy')) violations.push(m.text());
    });
    try {
      await page.goto(`${site.origin}/guide/`);
      const launcher = page.locator('docent-assistant .launcher');
      const look = (el: unknown) => {
        const style = (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string; position: string } }).getComputedStyle(el);
        return { background: style.backgroundColor, position: style.position };
      };
      expect(await launcher.evaluate(look)).toEqual({ background: 'rgb(37, 99, 235)', position: 'fixed' });
      expect(violations).toEqual([]);
    } finally {
      await page.close();
      await site.close();
    }
  });

  it('loads as an ES module that a bundling site places itself', async () => {
    const site = await serveDocsSite(
      () =>
        `<!doctype html><body><docent-assistant api-url="${gw.url}" domain="${domain}" api-key="${assistantKey}" panel-title="Docs help"></docent-assistant>` +
        `<script type="module">import { defineDocentAssistant } from '${gw.url}/widget.mjs'; defineDocentAssistant();</script></body>`,
    );
    const page = await browser.newPage();
    pageErrors.watch(page, site.origin);
    try {
      await page.goto(`${site.origin}/guide/`);
      expect(await page.locator('docent-assistant .launcher').getAttribute('aria-label')).toBe('Docs help (opens the docs assistant)');
    } finally {
      await page.close();
      await site.close();
    }
  });
});
