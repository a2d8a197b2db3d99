import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import type { BrowserContext, Page } from 'playwright-core';
import type { ThreadDoc } from '../../src/assistant/threads';
import { runDocsIngest } from '../../src/cli/docs-ingest';
import { playground } from '../../src/playground';
import { launchChromium, PageErrors } from '../support/chromium';
import { deleteTestIndexes, npmDocsFolder } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';
import { type Started, startWorkerProcess } from '../support/process';
import { agentWorkerEnv } from '../support/worker-env';
import { startScriptedModel, type ChatRequest, type ScriptedModel, type ScriptedTurn, modelSettings } from '../support/scripted-model';

// The playground in Debian's chromium, served from origins other than the API's, against the real gateway, a worker
// process, Temporal, MongoDB, Elasticsearch and git over HTTP; only the model and the GitHub API are doubles.

const token = 'ghs_docentplaygroundtoken012345';
const domain = 'docs.widgets.test';
const answer = ['Run ', '`npm ci` ', 'for a clean, ', 'repeatable install [1].'];
// An answer a prompt injection could produce: markup, script and a script link, which the page must show as text.
const rawHtmlAnswer = '**Bold** <img src=x onerror="window.__injected=1"> <script>window.__injected=2</script> [click](javascript:window.__injected=3)';
let git: GitServer;
let github: GitHubDouble;
let model: ScriptedModel;
let gw: RunningGateway;
let worker: Started;
let workspaceDir: string;
let profileDir: string;
let browser: BrowserContext;
let allowedPage: StaticSite;
let refusedPage: StaticSite;
let assistantKey: string;
let adminKey: string;

interface StaticSite {
  origin: string;
  close(): Promise<void>;
}

/** The built playground served on a port of its own: another origin than the gateway's. */
async function servePlayground(dir: string): Promise<StaticSite> {
  const app = Fastify({ forceCloseConnections: true });
  await app.register(playground(dir));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    origin: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    close: () => app.close(),
  };
}

const lastUser = (req: ChatRequest) => JSON.stringify(req.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');

/** Agent requests carry tools: edit the README, then title the change. Assistant requests get a slow streamed answer. */
function script(req: ChatRequest): ScriptedTurn {
  if (!req.tools?.length && lastUser(req).includes('raw html')) return { text: rawHtmlAnswer };
  if (!req.tools?.length) return { text: answer, chunkDelayMs: 250 };
  // A plan job's planning turn is offered no tool that edits.
  if (!req.tools.some((t) => t.function.name === 'edit_file')) return { text: '## Plan\n\n1. Fix **wrold** in README.md' };
  if (req.messages.at(-1)?.role === 'tool') return { text: 'Fix typo in README\n\nCorrected "wrold" to "world".' };
  // The edit waits a moment, so the page shows events while the job is still active.
  return lastUser(req).includes('fix the typo')
    ? { toolCalls: [{ name: 'edit_file', args: { path: 'README.md', old: 'wrold', new: 'world' } }], firstChunkDelayMs: 1500 }
    : { text: 'No change needed\n\nNothing to do.' };
}

beforeAll(async () => {
  git = await startGitServer(token);
  github = await startGitHubDouble({ token, ...backedBy(git) });
  model = await startScriptedModel(script);
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-ws-'));
  await git.createRepo('acme', 'widgets', { 'README.md': '# Widgets\n\nHello wrold\n' });
  const modelEnv = { ...modelSettings(model) };
  gw = await startGateway({ ...modelEnv, DOCENT_GITHUB_GIT_URL: git.url });
  const c = gw.deps.config;
  worker = await startWorkerProcess(agentWorkerEnv({ gw, model, github, git, token, workspaceDir }));
  await runDocsIngest(c, { domain, source: npmDocsFolder, baseUrl: 'https://docs.npmjs.com' }, () => undefined);

  allowedPage = await servePlayground(c.playgroundDir);
  refusedPage = await servePlayground(c.playgroundDir);
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'widgets', orgId: 'acme', repository: 'acme/widgets', ref: 'main', domain, allowedOrigins: [allowedPage.origin] });
  assistantKey = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain })).key;
  adminKey = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'widgets' })).key;

  ({ browser, profileDir } = await launchChromium({
    viewport: { width: 1280, height: 900 },
  }));
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await worker?.stop('SIGKILL');
  if (gw) await deleteTestIndexes(gw.deps.config);
  await gw?.stop();
  await Promise.all([git?.close(), github?.close(), model?.close(), allowedPage?.close(), refusedPage?.close()]);
  await Promise.all([workspaceDir, profileDir].filter(Boolean).map((d) => rm(d, { recursive: true, force: true })));
});

// A page that threw (an uncaught error or rejection) fails the test that opened or used it.
const pageErrors = new PageErrors();
afterEach(() => expect(pageErrors.take()).toEqual([]));

/** Opens the playground from `origin`, pointed at the gateway, and types the keys in as a user would. */
async function openPlayground(origin: string): Promise<Page> {
  const page = await browser.newPage();
  pageErrors.watch(page, origin);
  await page.goto(`${origin}/playground/?api=${encodeURIComponent(gw.url)}&domain=${domain}&project=widgets`);
  await page.fill('input[name=assistantKey]', assistantKey);
  await page.fill('input[name=adminKey]', adminKey);
  return page;
}

async function ask(page: Page, question: string) {
  await page.fill('input[name=question]', question);
  await page.getByRole('button', { name: 'Ask', exact: true }).click();
}

// Page-side predicates are strings: the test compiles without the DOM library.
/**
 * Waits until `expression` holds in the page, read by page.evaluate (DevTools' own evaluation): Playwright's
 * waitForFunction compiles it in the page, which the playground's content security policy rightly refuses.
 */
async function waitInPage(page: Page, expression: string, _arg?: undefined, options: { timeout?: number } = {}): Promise<void> {
  const deadline = Date.now() + (options.timeout ?? 30_000);
  while (!(await page.evaluate(expression))) {
    if (Date.now() > deadline) throw new Error(`still not true after ${options.timeout ?? 30_000} ms: ${expression}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const chatStatusIs = (status: string) => `document.querySelector('[data-testid=chat-status]')?.textContent === '${status}'`;
const assistantTexts = (page: Page) => page.locator('li.assistant .text').allTextContents();

describe('playground from an allowed origin', () => {
  let page: Page;
  beforeAll(async () => {
    page = await openPlayground(allowedPage.origin);
  });
  afterAll(() => page?.close());

  it('streams an answer with source links, then keeps the thread for a follow-up', async () => {
    await ask(page, 'How do I do a clean install in CI?');
    // Part of the answer is on screen while the stream is still open.
    await waitInPage(
      page,
      `(() => {
      const text = document.querySelector('li.assistant .text')?.textContent ?? '';
      return ${chatStatusIs('streaming')} && text.length > 0 && !text.endsWith('[1].');
    })()`,
    );
    await waitInPage(page, chatStatusIs('ready'));
    // Markdown: the backticks become a code element.
    expect(await assistantTexts(page)).toEqual([answer.join('').replaceAll('`', '')]);
    expect(await page.locator('li.assistant .text code').first().textContent()).toBe('npm ci');
    const links = page.locator('li.assistant').first().locator('.sources a');
    expect(await links.count()).toBe(5);
    const hrefs = await Promise.all((await links.all()).map((a) => a.getAttribute('href')));
    expect(hrefs.some((h) => h?.startsWith('https://docs.npmjs.com/commands/npm-ci'))).toBe(true);
    // The sources are numbered, and the answer's [1] marker links to the first.
    const first = page.locator('li.assistant').first();
    expect(await first.locator('ol.sources > li').count()).toBe(5);
    const marker = first.locator('.text a.citation').first();
    expect(await marker.textContent()).toBe('[1]');
    const target = (await marker.getAttribute('href'))!.slice(1);
    expect(await first.locator('ol.sources > li').first().getAttribute('id')).toBe(target);
    const threadId = await page.locator('[data-testid=thread-id]').textContent();
    expect(threadId).toMatch(/^thr_/);

    await ask(page, 'And how is it different from npm install?');
    await waitInPage(page, `document.querySelectorAll('li.assistant').length === 2 && ${chatStatusIs('ready')}`);
    expect(await page.locator('[data-testid=thread-id]').textContent()).toBe(threadId);
    const stored = await gw.deps.mongo.db.collection<ThreadDoc>('threads').findOne({ _id: threadId! });
    expect(stored?.turns.map((t) => t.userMessage)).toEqual(['How do I do a clean install in CI?', 'And how is it different from npm install?']);
  });

  it('renders an answer as Markdown and shows raw HTML as text, never as markup', async () => {
    await ask(page, 'show me raw html');
    await waitInPage(page, `document.querySelectorAll('li.assistant').length === 3 && ${chatStatusIs('ready')}`);
    const last = page.locator('li.assistant').last();
    expect(await last.locator('strong').textContent()).toBe('Bold');
    expect(await last.locator('img, script').count()).toBe(0);
    expect(await last.locator('.text a').count()).toBe(0);
    expect(await last.locator('.text').textContent()).toContain('<img src=x onerror="window.__injected=1">');
    expect(await page.evaluate('window.__injected')).toBeUndefined();
  });

  it('creates an agent job and follows it live to completed with a pull request link', async () => {
    await page.fill('textarea[name=prompt]', 'fix the typo in the README');
    await page.getByRole('button', { name: 'Create job' }).click();
    // The event list fills while the job runs.
    await waitInPage(page, `document.querySelectorAll('[data-testid=job-events] li').length > 0 && document.querySelector('[data-testid=job-status]')?.textContent === 'active'`, undefined, {
      timeout: 60_000,
    });
    await page
      .locator('[data-testid=pr-link]')
      .waitFor({ timeout: 90_000 })
      .catch(async (err: Error) => {
        throw new Error(`${err.message}\njobs pane: ${await page.locator('.jobs').innerText()}\nworker: ${worker.output.slice(-20).join('\n')}`);
      });
    expect(await page.locator('[data-testid=job-status]').textContent()).toBe('completed');
    expect(await page.locator('[data-testid=job-history]').textContent()).toBe('active → completed');
    expect(github.pulls).toHaveLength(1);
    expect(await page.locator('[data-testid=pr-link]').getAttribute('href')).toBe(github.pulls[0]!.html_url);
    const jobId = await page.locator('[data-testid=job-id]').textContent();
    expect(github.pulls[0]!.head).toBe(`docent/${jobId}`);
    // The watch sends the job as it changes and the status event written just after it, so the event may come a
    // poll after the pull request link.
    await waitInPage(page, `[...document.querySelectorAll('[data-testid=job-events] li')].at(-1)?.textContent.endsWith('status completed')`, undefined, { timeout: 10_000 });
    const events = await page.locator('[data-testid=job-events] li').allTextContents();
    expect(events.some((e) => e.endsWith('step edit_file README.md'))).toBe(true);
    expect(events.at(-1)).toMatch(/status completed$/);
    // The ids the page shows are the stream's: one per event, in order.
    expect(events.map((e) => Number(/^#(\d+)/.exec(e)?.[1]))).toEqual(events.map((_, i) => i + 1));
    expect(await page.locator('[data-testid=job-list]').textContent()).toContain(jobId!);
    // The job's diff, through the Connect GetAgentJobDiff call.
    await page.getByRole('button', { name: 'Show diff' }).click();
    const diff = await page.locator('[data-testid=job-diff]').innerText();
    expect(diff).toContain('diff --git a/README.md b/README.md');
    expect(diff).toMatch(/^-.*wrold/m);
    expect(diff).toMatch(/^\+.*world/m);
    await mkdir('test-results', { recursive: true });
    await page.screenshot({ path: 'test-results/playground.png', fullPage: true });
  });

  it('sends a follow-up, then archives the job, from the page', async () => {
    await page.fill('input[name=follow-up]', 'check the README is fine');
    await page.getByRole('button', { name: 'Send follow-up' }).click();
    await waitInPage(page, `document.querySelectorAll('[data-testid=job-events] li[data-type="turn.started"]').length === 2`, undefined, { timeout: 60_000 });
    await waitInPage(page, `document.querySelector('[data-testid=job-status]')?.textContent === 'completed'`, undefined, { timeout: 60_000 });
    await page.getByRole('button', { name: 'Archive' }).click();
    await waitInPage(page, `document.querySelector('[data-testid=job-status]')?.textContent === 'archived'`, undefined, { timeout: 30_000 });
    const jobId = await page.locator('[data-testid=job-id]').textContent();
    expect((await gw.deps.mongo.db.collection('jobs').findOne({ _id: jobId as never }))?.status).toBe('archived');
  });

  it('creates a plan job, shows its plan, and approves it from the page', async () => {
    const pullsBefore = github.pulls.length;
    await page.check('input[name=plan-first]');
    await page.fill('textarea[name=prompt]', 'fix the typo in the README, with a plan');
    await page.getByRole('button', { name: 'Create job' }).click();
    const plan = page.locator('[data-testid=job-plan][data-awaiting=true]');
    await plan.waitFor({ timeout: 60_000 });
    expect(await plan.locator('strong').allTextContents()).toEqual(['Plan 1', 'wrold']);
    expect(await page.locator('[data-testid=job-status]').textContent()).toBe('active');
    expect(github.pulls).toHaveLength(pullsBefore);

    await page.getByRole('button', { name: 'Approve plan' }).click();
    await page.locator('[data-testid=pr-link]').waitFor({ timeout: 90_000 });
    expect(await page.locator('[data-testid=job-status]').textContent()).toBe('completed');
    expect(github.pulls).toHaveLength(pullsBefore + 1);
    const events = await page.locator('[data-testid=job-events] li').allTextContents();
    expect(events.some((e) => e.endsWith('plan 1 ready'))).toBe(true);
    expect(events.some((e) => e.endsWith('plan 1 approved'))).toBe(true);
    expect(await page.getByRole('button', { name: 'Approve plan' }).isDisabled()).toBe(true);
  });
});

describe('playground from an origin the project does not allow', () => {
  it('cannot reach the assistant or the agent API', async () => {
    const page = await openPlayground(refusedPage.origin);
    try {
      await ask(page, 'How do I do a clean install in CI?');
      await page.locator('.chat [role=alert]').waitFor();
      expect(await assistantTexts(page)).toEqual([]);
      await page.fill('textarea[name=prompt]', 'fix the typo in the README');
      await page.getByRole('button', { name: 'Create job' }).click();
      await page.locator('.jobs [role=alert]').waitFor();
      expect(await page.locator('[data-testid=job-id]').count()).toBe(0);
    } finally {
      await page.close();
    }
  });

  it('gets 403 on the preflights of REST and Connect paths; an allowed origin gets the Connect headers', async () => {
    const preflight = (p: string, method = 'POST') =>
      fetch(gw.url + p, { method: 'OPTIONS', headers: { origin: refusedPage.origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type' } });
    expect((await preflight(`/discovery/v2/assistant/${domain}/message`)).status).toBe(403);
    expect((await preflight('/v2/agent/widgets/job')).status).toBe(403);
    expect((await preflight('/agent.v2.AgentService/WatchAgentJob')).status).toBe(403);
    const allowed = await fetch(gw.url + '/agent.v2.AgentService/WatchAgentJob', {
      method: 'OPTIONS',
      headers: { origin: allowedPage.origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'connect-protocol-version, content-type' },
    });
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(allowedPage.origin);
    expect(allowed.headers.get('access-control-allow-headers')).toContain('connect-timeout-ms');
  });

  it('refuses a Connect call from an origin that only another project allows', async () => {
    await gw.deps.tenancy.createProject({ _id: 'gadgets', orgId: 'acme', repository: 'acme/gadgets', ref: 'main', domain: 'docs.gadgets.test', allowedOrigins: ['http://gadgets.test'] });
    const call = (origin: string) =>
      fetch(`${gw.url}/agent.v2.AgentService/ListAgentJobs`, {
        method: 'POST',
        headers: { origin, authorization: `Bearer ${adminKey}`, 'content-type': 'application/json', 'connect-protocol-version': '1' },
        body: JSON.stringify({ projectId: 'widgets' }),
      });
    const refused = await call('http://gadgets.test');
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { code: string }).code).toBe('permission_denied');
    const allowed = await call(allowedPage.origin);
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(allowedPage.origin);
    expect(allowed.headers.get('access-control-expose-headers')).toContain('grpc-status');
  });
});

describe('playground served by the gateway', () => {
  it('calls its own gateway without that origin in any allow-list', async () => {
    const page = await openPlayground(gw.url);
    try {
      await ask(page, 'How do I do a clean install in CI?');
      await waitInPage(page, `document.querySelectorAll('li.assistant .sources a').length === 5 && ${chatStatusIs('ready')}`);
      // Markdown: the backticks become a code element.
      expect(await assistantTexts(page)).toEqual([answer.join('').replaceAll('`', '')]);
      expect(await page.locator('li.assistant .text code').first().textContent()).toBe('npm ci');
    } finally {
      await page.close();
    }
  });

  it('answers /playground/ with the page and its hashed assets, and redirects /playground', async () => {
    const r = await fetch(`${gw.url}/playground/`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await r.text();
    const script = /src="(\/playground\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const js = await fetch(gw.url + script);
    expect(js.headers.get('cache-control')).toContain('immutable');
    expect(await js.text()).not.toContain('docent_'); // no key is built into the bundle
    expect((await fetch(`${gw.url}/playground`, { redirect: 'manual' })).headers.get('location')).toBe('/playground/');
    expect((await fetch(`${gw.url}/playground/..%2f..%2fpackage.json`)).status).toBe(404);
  });
});
