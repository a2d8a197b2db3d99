import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import type { BrowserContext, Page } from 'playwright-core';
import { runDocsIngest } from '../../src/cli/docs-ingest';
import { seriousViolations } from '../support/axe';
import { launchChromium, PageErrors } from '../support/chromium';
import { deleteTestIndexes, miniDocsFolder, npmDocsFolder } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';
import { poll } from '../support/poll';
import { startProcess, type Started, isWorkerPolling } from '../support/process';
import { startReceiver } from '../support/webhook-receiver';
import { startScriptedModel, type ChatRequest, type ScriptedModel, type ScriptedTurn, modelSettings } from '../support/scripted-model';
import { agentWorkerEnv } from '../support/worker-env';

// The console in Debian's chromium, signed in with an operator key, against the real gateway, a worker process,
// Temporal, MongoDB, Elasticsearch and git over HTTP; only the model and the GitHub API are doubles. Every page is
// scanned with axe-core. DOCENT_TEST_CONSOLE_SCREENSHOTS=1 (what npm run console:screenshots sets) writes docs/console/*.png.

const token = 'ghs_docentconsoletoken0123456789';
const domain = 'docs.console-widgets.test';
const question = 'How do I do a clean install in CI?';
const plan = '## Plan\n\n1. Create NOTES.md with a line about widgets (CONSOLE-PLAN).';
const screenshotsDir = process.env.DOCENT_TEST_CONSOLE_SCREENSHOTS === '1' ? path.resolve(__dirname, '../../docs/console') : undefined;
let git: GitServer;
let github: GitHubDouble;
let model: ScriptedModel;
let gw: RunningGateway;
let worker: Started;
let workspaceDir: string;
let profileDir: string;
let browser: BrowserContext;
let docsSite: { origin: string; close(): Promise<void> };
let operatorKey: string;
let assistantKey = '';
let receiver: Awaited<ReturnType<typeof startReceiver>>;
/** The webhook receiver refuses deliveries until the test lets it take them. */
let receiverTakes = false;
// Webhook signing secrets are sealed with it; the receiver listens on loopback, which only the second lets docent call.
const webhookSettings = { DOCENT_SECRET_KEY: randomBytes(32).toString('base64'), DOCENT_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8' };

/** The docs repository the Docs page follows: two pages in docs/, and a README outside it. */
const widgetDocs = {
  'README.md': '# Widgets docs\n\nThe sources of the widgets manual.\n',
  'docs/install.md': '# Installing the sprocket\n\nRun sprocket setup to install the widget controller and its gear drivers.\n',
  'docs/tuning.md': '# Tuning the sprocket\n\nTurn the flywheel screw a quarter turn to slow the sprocket down.\n',
};

const toolNames = (req: ChatRequest) => (req.tools ?? []).map((t) => t.function.name);
const afterTool = (req: ChatRequest) => req.messages.at(-1)?.role === 'tool';

/** The command the timeline job's agent runs: only running it prints 42. */
const timelineCommand = 'echo TIMELINE-OUTPUT-$((6*7))';
const asked = (req: ChatRequest, text: string) => req.messages.some((m) => m.role === 'user' && JSON.stringify(m.content ?? '').includes(text));
const toolAnswers = (req: ChatRequest) => req.messages.filter((m) => m.role === 'tool').length;

/** The timeline job: the agent runs a command, then writes NOTES.md, then answers. */
function timelineScript(req: ChatRequest): ScriptedTurn {
  if (toolAnswers(req) === 0) return { toolCalls: [{ name: 'run_command', args: { command: timelineCommand } }] };
  if (toolAnswers(req) === 1) return { toolCalls: [{ name: 'write_file', args: { path: 'NOTES.md', content: 'widgets, checked\n' } }] };
  return { text: 'Check the widgets\n\nRan the widget check and wrote NOTES.md.' };
}

/** Assistant requests get a cited answer; a plan turn (offered no tool that writes) plans; an edit turn writes NOTES.md. */
function script(req: ChatRequest): ScriptedTurn {
  if (!req.tools?.length) return { text: 'Run `npm ci` for a clean, repeatable install [1].' };
  if (!toolNames(req).includes('write_file')) return { text: plan };
  if (asked(req, 'run the widget check')) return timelineScript(req);
  // The edit waits a moment, so the page shows events arriving while the job runs.
  return afterTool(req) ? { text: 'Add NOTES.md\n\nNotes, as planned.' } : { toolCalls: [{ name: 'write_file', args: { path: 'NOTES.md', content: 'widgets\n' } }], firstChunkDelayMs: 1500 };
}

/** A docs site on an origin of its own, with the widget's script tag (the assistant key is made by the console). */
async function serveDocsSite() {
  const app = Fastify({ forceCloseConnections: true });
  app.get('/guide/', (_req, reply) =>
    reply.type('text/html').send(`<!doctype html><html lang="en"><head><title>Widgets docs</title></head><body><h1>Widgets guide</h1>
<script src="${gw.url}/widget.js" data-domain="${domain}" data-key="${assistantKey}" defer></script></body></html>`),
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { origin: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
}

beforeAll(async () => {
  git = await startGitServer(token);
  github = await startGitHubDouble({ token, ...backedBy(git) });
  model = await startScriptedModel(script);
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-ws-'));
  await git.createRepo('acme', 'widgets', { 'README.md': '# Widgets\n' });
  await git.createRepo('acme', 'widgets-docs', widgetDocs);
  const modelEnv = { ...modelSettings(model) };
  gw = await startGateway({ ...modelEnv, ...webhookSettings, DOCENT_GITHUB_GIT_URL: git.url });
  worker = startProcess('src/worker.js', { ...agentWorkerEnv({ gw, model, github, git, token, workspaceDir }), ...webhookSettings });
  receiver = await startReceiver(() => (receiverTakes ? 204 : 500));
  await worker.waitForLog(isWorkerPolling);
  await runDocsIngest(gw.deps.config, { domain, source: npmDocsFolder, baseUrl: 'https://docs.npmjs.com' }, () => undefined);
  // The built-in domain, ingested once and followed by nothing, as `npm start` leaves it (src/cli/self-docs.ts).
  await runDocsIngest(gw.deps.config, { domain: 'docent.local', source: miniDocsFolder, baseUrl: `${gw.url}/docs` }, () => undefined);
  docsSite = await serveDocsSite();
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'docent', orgId: 'acme', repository: 'acme/widgets', ref: 'main', domain: 'docent.local' });
  operatorKey = (await gw.deps.keys.create({ kind: 'operator', orgId: '*' })).key;
  ({ browser, profileDir } = await launchChromium({ viewport: { width: 1280, height: 900 } }));
}, 240_000);

afterAll(async () => {
  // The schedule would outlive the test's task queues.
  if (gw) await fetch(`${gw.url}/v2/admin/docs/${domain}/follow`, { method: 'DELETE', headers: { authorization: `Bearer ${operatorKey}` } });
  await browser?.close();
  await worker?.stop('SIGKILL');
  if (gw) await deleteTestIndexes(gw.deps.config);
  await gw?.stop();
  await Promise.all([git?.close(), github?.close(), model?.close(), docsSite?.close(), receiver?.close()]);
  await Promise.all([workspaceDir, profileDir].filter(Boolean).map((d) => rm(d, { recursive: true, force: true })));
});

// A page that threw (an uncaught error or rejection) fails the test that opened or used it.
const pageErrors = new PageErrors();
afterEach(() => expect(pageErrors.take()).toEqual([]));

/** No serious or critical accessibility violation on the page as shown; with DOCENT_TEST_CONSOLE_SCREENSHOTS, its picture. */
async function checkPage(page: Page, name: string) {
  expect(await seriousViolations(page)).toEqual([]);
  if (screenshotsDir) {
    await mkdir(screenshotsDir, { recursive: true });
    await page.screenshot({ path: path.join(screenshotsDir, `${name}.png`), fullPage: true });
  }
}

/** Waits for the job page to show `status` (locators, not page-side functions: the console's CSP allows no eval). */
const statusShown = (page: Page, status: string, timeout = 60_000) => page.locator('[data-testid=job-status]', { hasText: new RegExp(`^${status}$`) }).waitFor({ timeout });
/** Waits for a top-level heading; when it does not come, the error says what the page shows instead. */
async function heading(page: Page, name: string | RegExp, timeout = 30_000) {
  await page
    .getByRole('heading', { level: 1, name })
    .waitFor({ timeout })
    .catch(async (err: Error) => {
      throw new Error(`${err.message}\npage shows: ${await page.locator('main').innerText()}`);
    });
}
const eventTypes = (page: Page) => page.locator('[data-testid=events] li').evaluateAll((lis) => lis.map((li) => (li as unknown as { dataset: { type: string } }).dataset.type));
const go = async (page: Page, hash: string, name: string) => {
  await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
  await heading(page, name);
};

describe('the console, signed in with an operator key', () => {
  let page: Page;
  beforeAll(async () => {
    page = await browser.newPage();
    pageErrors.watch(page, 'console');
  });
  afterAll(() => page?.close());

  it('signs in: the key becomes an HttpOnly session cookie and is kept nowhere in the page', async () => {
    await page.goto(`${gw.url}/console/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await checkPage(page, 'sign-in');
    await page.getByLabel('Operator key or project admin key').fill(operatorKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Projects' }).waitFor();
    expect(await page.getByTestId('who').textContent()).toBe('Signed in with an operator key, all organizations');
    const cookies = await browser.cookies(gw.url);
    expect(cookies).toEqual([expect.objectContaining({ name: 'docent_console', httpOnly: true, sameSite: 'Strict', path: '/' })]);
    expect(cookies[0]!.value).not.toContain(operatorKey);
    expect(await page.evaluate('document.cookie')).toBe('');
    expect(await page.evaluate('JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })')).toBe('{}{}');
    expect(await page.content()).not.toContain(operatorKey);
  });

  it('creates an organization from the projects page', async () => {
    await page.getByRole('heading', { name: 'New organization' }).waitFor();
    await page.getByLabel('Id (letters, digits, . _ -)').fill('ux-org');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('status').filter({ hasText: 'Organization ux-org created' }).waitFor();
    expect(await gw.deps.tenancy.hasOrg('ux-org')).toBe(true);
  });

  it('creates a project from the projects page', async () => {
    await checkPage(page, 'projects');
    await page.getByLabel('Project id').fill('widgets');
    await page.getByLabel('Organization', { exact: true }).fill('acme');
    await page.getByLabel('Repository (owner/name or a git URL)').fill('acme/widgets');
    await page.getByLabel('Documentation domain').fill(domain);
    await page.getByLabel('Origins allowed to call the assistant (one a line)').fill(docsSite.origin);
    await page.getByRole('button', { name: 'Create project' }).click();
    await heading(page, 'Project widgets');
    expect(await gw.deps.tenancy.getProject('widgets')).toMatchObject({ orgId: 'acme', repository: 'acme/widgets', domain, allowedOrigins: [docsSite.origin] });
    await page.getByLabel('Check commands (one a line)').fill('test -f README.md');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('status').filter({ hasText: 'Settings saved' }).waitFor();
    expect((await gw.deps.tenancy.getProject('widgets'))?.checkCommands).toEqual(['test -f README.md']);
    await checkPage(page, 'project-settings');
  });

  it('makes a key that is shown once', async () => {
    await go(page, '#/p/widgets/keys', 'Keys · widgets');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = (await page.getByTestId('new-key').textContent())!;
    expect(shown).toMatch(/^docent_admin_/);
    expect((await fetch(`${gw.url}/v2/agent/widgets/jobs`, { headers: { authorization: `Bearer ${shown}` } })).status).toBe(200);
    await checkPage(page, 'keys');
    // The docs site's widget gets an assistant key made the same way.
    await page.getByLabel('Kind').selectOption('assistant');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('heading', { name: /^New assistant key/ }).waitFor();
    assistantKey = (await page.getByTestId('new-key').textContent())!;
    expect(assistantKey).toMatch(/^docent_asst_/);
    // Opened again, the page lists the keys by id and shows neither key.
    await go(page, '#/p/widgets', 'Project widgets');
    await go(page, '#/p/widgets/keys', 'Keys · widgets');
    expect(await page.getByTestId('keys').locator('tbody tr').count()).toBe(2);
    const html = await page.content();
    expect(html).not.toContain(shown);
    expect(html).not.toContain(assistantKey);
    // A read-only admin key, limited to an address: the list says so, and the key reads but changes nothing.
    await page.getByLabel('Scope (admin keys)').selectOption('read');
    await page.getByLabel(/^Allowed addresses/).fill('127.0.0.1, ::1');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('heading', { name: /^New admin key/ }).waitFor();
    const readOnly = (await page.getByTestId('new-key').textContent())!;
    expect(await page.getByTestId('keys').locator('tbody tr').filter({ hasText: 'read only' }).count()).toBe(1);
    const headers = { authorization: `Bearer ${readOnly}`, 'content-type': 'application/json' };
    expect((await fetch(`${gw.url}/v2/agent/widgets/jobs`, { headers })).status).toBe(200);
    expect((await fetch(`${gw.url}/v2/agent/widgets/job`, { method: 'POST', headers, body: JSON.stringify({ prompt: 'x' }) })).status).toBe(403);

    // Revoking asks first, saying what it does; cancelled, the key still works.
    const readOnlyId = (await page.getByRole('heading', { name: /^New admin key/ }).textContent())!.replace('New admin key ', '');
    const revoke = page.getByRole('button', { name: `Revoke ${readOnlyId}` });
    const dialog = page.getByRole('dialog', { name: `Revoke the key ${readOnlyId}?` });
    await revoke.click();
    expect(await dialog.textContent()).toContain('Every call with it is refused from now on');
    await checkPage(page, 'keys-revoke-dialog');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect((await fetch(`${gw.url}/v2/agent/widgets/jobs`, { headers })).status).toBe(200);
    await revoke.click();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Key ${readOnlyId} revoked` })
      .waitFor();
    expect((await fetch(`${gw.url}/v2/agent/widgets/jobs`, { headers })).status).toBe(401);
  });

  it('connects an organization to its forge: the token is tested and never shown, the webhook secret is shown once, rotating and removing ask first', async () => {
    await go(page, '#/forges', 'Forge connections');
    await page.getByRole('link', { name: 'acme' }).click();
    await heading(page, 'Forge connections · acme');
    await page.getByLabel('GitHub token').fill(token);
    await page.getByLabel('API URL (GitHub Enterprise; empty: api.github.com)').fill(github.apiUrl);
    await page.getByLabel('Git URL (GitHub Enterprise; empty: github.com)').fill(git.url);
    await page.getByRole('button', { name: 'Add connection' }).click();
    const secret = (await page.getByTestId('forge-webhook-secret').textContent())!;
    const listForges = async () => ((await (await fetch(`${gw.url}/v2/admin/orgs/acme/forges`, { headers: { authorization: `Bearer ${operatorKey}` } })).json()) as { forges: any[] }).forges;
    const [made] = await listForges();
    expect(made).toMatchObject({ orgId: 'acme', credential: 'token', apiUrl: github.apiUrl, gitUrl: git.url });
    expect(await page.getByTestId('forge-webhook-url').textContent()).toBe(made.webhookUrl);
    expect(secret).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(await page.content()).not.toContain(token);
    await checkPage(page, 'forges');

    // Each asks first in the console's dialog: cancelled, nothing changes; accepted, a new secret replaces the shown one.
    const asked = (name: string) => page.getByRole('dialog', { name });
    await page.getByRole('button', { name: `Rotate the webhook secret of ${made.id}` }).click();
    await asked(`Rotate the webhook secret of ${made.id}?`).getByRole('button', { name: 'Cancel' }).click();
    expect(await page.getByTestId('forge-webhook-secret').textContent()).toBe(secret);
    await page.getByRole('button', { name: `Rotate the webhook secret of ${made.id}` }).click();
    await asked(`Rotate the webhook secret of ${made.id}?`).getByRole('button', { name: 'Rotate' }).click();
    await page.getByTestId('forge-webhook-secret').filter({ hasNotText: secret }).waitFor();

    await page.getByRole('button', { name: `Remove ${made.id}` }).click();
    const removing = asked(`Remove ${made.id}?`);
    expect(await removing.textContent()).toContain('can no longer be reached');
    expect(await seriousViolations(page)).toEqual([]);
    await page.keyboard.press('Escape');
    await removing.waitFor({ state: 'detached' });
    expect(await page.getByTestId('forges').locator('tbody tr').count()).toBe(1);
    await page.getByRole('button', { name: `Remove ${made.id}` }).click();
    await removing.getByRole('button', { name: 'Remove', exact: true }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Connection ${made.id} removed` })
      .waitFor();
    expect(await listForges()).toEqual([]);
  });

  it('starts a plan job and approves the plan on its page while the event list follows the job live, then shows the diff and the pull request', async () => {
    await go(page, '#/p/widgets/jobs', 'Jobs · widgets');
    await page.getByLabel('Instruction', { exact: true }).fill('write NOTES.md about the widgets');
    await page.getByLabel('Plan first, edit once I approve').check();
    await page.getByRole('button', { name: 'Start job' }).click();
    await page.getByTestId('job-id').waitFor();
    const jobId = (await page.getByTestId('job-id').textContent())!;
    // Marks this page: had it reloaded, the mark would be gone.
    await page.evaluate('window.__sameDocument = true');
    await statusShown(page, 'awaiting approval', 90_000);
    // The plan's Markdown is rendered: its heading and its numbered step, not the raw text.
    const shownPlan = page.getByTestId('plan');
    expect(await shownPlan.getByRole('heading', { name: 'Plan' }).count()).toBe(1);
    expect(await shownPlan.locator('ol > li').allTextContents()).toEqual(['Create NOTES.md with a line about widgets (CONSOLE-PLAN).']);
    expect(await shownPlan.textContent()).not.toContain('##');
    expect(await eventTypes(page)).toContain('plan.ready');
    await checkPage(page, 'job-plan');
    await page.getByRole('button', { name: 'Approve plan' }).click();
    // The events after the approval arrive on the open stream: the approval, the edit, the commit, the pull request.
    await page.locator('[data-testid=events] li[data-type="plan.approved"]').waitFor({ timeout: 30_000 });
    await page.getByTestId('pr-link').waitFor({ timeout: 90_000 });
    await statusShown(page, 'completed', 30_000);
    expect(await page.evaluate('window.__sameDocument')).toBe(true);
    const types = await eventTypes(page);
    expect(types.indexOf('plan.approved')).toBeGreaterThan(types.indexOf('plan.ready'));
    expect(types).toEqual(expect.arrayContaining(['step', 'commit', 'pull_request']));
    const pull = github.pulls.find((p) => p.head === `docent/${jobId}`)!;
    expect(await page.getByTestId('pr-link').getAttribute('href')).toBe(pull.html_url);
    const diffFile = page.locator('[data-testid=diff] details[data-path="NOTES.md"]');
    await diffFile.waitFor();
    expect(await diffFile.locator('.add').allTextContents()).toContain('+widgets\n');
    // The diff of one turn, chosen on the page.
    await page.getByLabel('Diff of').selectOption('1');
    await page.locator('[data-testid=diff] details[data-path="NOTES.md"]').waitFor();
    await checkPage(page, 'job');
  });

  it("runs a first job from the project page in one click, and the job's page follows it to its pull request", async () => {
    await go(page, '#/p/widgets', 'Project widgets');
    await page.getByRole('button', { name: 'Run a first job' }).click();
    await page.getByTestId('job-id').waitFor();
    const jobId = (await page.getByTestId('job-id').textContent())!;
    await page.getByTestId('pr-link').waitFor({ timeout: 90_000 });
    await statusShown(page, 'completed', 30_000);
    expect(await page.getByTestId('pr-link').getAttribute('href')).toBe(github.pulls.find((p) => p.head === `docent/${jobId}`)!.html_url);
  });

  it("shows the agent's timeline: the command it ran with its exit code and output, the time of each step, and the workflow's link", async () => {
    const before = Date.now();
    await go(page, '#/p/widgets/jobs', 'Jobs · widgets');
    await page.getByLabel('Instruction', { exact: true }).fill('run the widget check, then write NOTES.md');
    await page.getByRole('button', { name: 'Start job' }).click();
    await page.getByTestId('job-id').waitFor();
    const jobId = (await page.getByTestId('job-id').textContent())!;
    await statusShown(page, 'completed', 90_000);
    const after = Date.now();
    expect(await page.getByTestId('job-instruction').textContent()).toBe('run the widget check, then write NOTES.md');
    const ran = page.locator('[data-testid=events] li[data-type=step][data-kind=tool]', { hasText: 'TIMELINE-OUTPUT' });
    await ran.waitFor();
    expect(await ran.locator('code.command').textContent()).toBe(timelineCommand);
    expect(await ran.textContent()).toContain('exit 0');
    await ran.locator('summary', { hasText: /^Output$/ }).click();
    expect(await ran.locator('pre').textContent()).toContain('TIMELINE-OUTPUT-42');
    // Every step (two tool calls and the three model calls) says when it started and how long it took, in order.
    const steps = page.locator('[data-testid=events] li[data-type=step]');
    expect(await steps.evaluateAll((lis) => lis.map((li) => (li as unknown as { dataset: { kind: string } }).dataset.kind))).toEqual(['model', 'tool', 'model', 'tool', 'model']);
    const started = (await steps.locator('time').evaluateAll((ts) => ts.map((t) => t.getAttribute('datetime')))).map((t) => Date.parse(t!));
    expect(started.every((t) => t >= before - 1000 && t <= after)).toBe(true);
    expect(started).toEqual([...started].sort((a, b) => a - b));
    for (const took of await steps.locator('.took').allTextContents()) expect(took).toMatch(/^\d+(\.\d)? (ms|s)$|^\d+ min \d+ s$/);
    // A model call says its tokens; the written file shows by its path and length, not its text.
    expect(await steps.first().textContent()).toMatch(/10 in \/ \d+ out tokens/);
    const wrote = page.locator('[data-testid=events] li[data-type=step][data-kind=tool]', { hasText: 'write_file' });
    expect(await wrote.textContent()).toContain('NOTES.md');
    expect(await wrote.textContent()).not.toContain('widgets, checked');
    expect(await page.locator('[data-testid=events] li[data-type="turn.finished"]').textContent()).toMatch(/Turn 1 completed · took /);
    const { uiUrl, namespace } = gw.deps.config.temporal;
    expect(await page.getByTestId('workflow-link').getAttribute('href')).toBe(`${uiUrl.replace(/\/+$/, '')}/namespaces/${namespace}/workflows/agent-job-${jobId}`);
    await checkPage(page, 'job-timeline');
  });

  it('lists jobs with their instruction, outcome, origin and age, filters them by instruction on the server and pages through them', async () => {
    await go(page, '#/p/widgets/jobs', 'Jobs · widgets');
    const rows = page.getByTestId('jobs').locator('tbody tr');
    const newest = await rows.first().locator('td').allTextContents();
    expect(newest.slice(1, 5)).toEqual(['run the widget check, then write NOTES.md', 'completed: pull request', 'api', expect.stringMatching(/^\d+ (s|min) ago$/)]);
    await page.getByLabel('Instruction contains').fill('WIDGET CHECK');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.waitForURL(/instruction=WIDGET/);
    await poll(
      'the filtered list',
      () => rows.count(),
      (n) => n === 1,
      10_000,
    );
    expect(await rows.first().locator('td').nth(1).textContent()).toBe('run the widget check, then write NOTES.md');
    // One job a page: the next page holds the job before it, and the first page is one link away.
    await go(page, '#/p/widgets/jobs?limit=1', 'Jobs · widgets');
    expect(await rows.count()).toBe(1);
    const first = await rows.first().locator('td').first().textContent();
    await page.getByTestId('older-jobs').click();
    await poll(
      'the next page',
      () => rows.first().locator('td').first().textContent(),
      (id) => id !== first,
      10_000,
    );
    expect(await rows.count()).toBe(1);
    await page.getByRole('link', { name: 'Newest jobs' }).click();
    await poll(
      'the first page',
      () => rows.first().locator('td').first().textContent(),
      (id) => id === first,
      10_000,
    );
  });

  it('stops another job and retries it from its page', async () => {
    // A webhook endpoint first, whose deliveries of this job's events the next test reads.
    await go(page, '#/p/widgets/webhooks', 'Webhooks · widgets');
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    receiver.setSecret((await page.getByTestId('webhook-secret').textContent())!);
    await go(page, '#/p/widgets/jobs', 'Jobs · widgets');
    await checkPage(page, 'jobs');
    await page.getByLabel('Instruction', { exact: true }).fill('write NOTES.md again');
    await page.getByLabel('Plan first, edit once I approve').check();
    await page.getByRole('button', { name: 'Start job' }).click();
    await page.getByTestId('job-id').waitFor();
    await statusShown(page, 'awaiting approval', 90_000);
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.getByRole('dialog', { name: 'Stop this turn?' }).getByRole('button', { name: 'Stop turn' }).click();
    await statusShown(page, 'failed', 60_000);
    expect(await page.getByTestId('job-error').textContent()).toContain('stopped');
    await page.getByRole('button', { name: 'Retry' }).click();
    // The retried turn writes the next plan, which the page shows as it comes.
    await page.getByRole('heading', { name: 'Plan (revision 2)' }).waitFor({ timeout: 90_000 });
    await statusShown(page, 'awaiting approval', 30_000);
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.getByRole('dialog', { name: 'Stop this turn?' }).getByRole('button', { name: 'Stop turn' }).click();
    await statusShown(page, 'failed', 60_000);
    // The list filters by status on the server.
    await go(page, '#/p/widgets/jobs?status=failed', 'Jobs · widgets');
    expect(await page.getByTestId('jobs').locator('tbody tr').count()).toBe(1);
  });

  it('makes a manual automation, runs it now, and finds its job through its runs and the job filter', async () => {
    await go(page, '#/p/widgets/automations', 'Automations · widgets');
    await page.getByLabel('Name').fill('Weekly notes');
    await page.getByLabel('Instruction').fill('write NOTES.md for the week');
    await page.getByRole('button', { name: 'Create automation' }).click();
    await page.getByRole('button', { name: 'Run now: Weekly notes' }).click();
    await page.getByRole('status').filter({ hasText: 'Run started' }).waitFor();
    const started = await poll(
      'a started run',
      async () => {
        await page.getByRole('button', { name: 'Runs of Weekly notes' }).click();
        await page.getByTestId('runs').waitFor();
        return page.getByTestId('runs').locator('tbody tr').first().locator('td').allTextContents();
      },
      (cells) => cells[2] === 'started',
      30_000,
    );
    const jobId = started[3]!;
    expect(jobId).toMatch(/^job_/);
    await checkPage(page, 'automations');
    await page.getByRole('link', { name: 'Its jobs in the job list' }).click();
    await heading(page, 'Jobs · widgets');
    const rows = page.getByTestId('jobs').locator('tbody tr');
    expect(await rows.count()).toBe(1);
    expect(await rows.first().locator('td').first().textContent()).toBe(jobId);
    expect(await rows.first().textContent()).toContain('automation_manual');
  });

  it('edits an automation, and deleting it asks first, saying what goes', async () => {
    await go(page, '#/p/widgets/automations', 'Automations · widgets');
    const automations = gw.deps.mongo.db.collection('automations');
    const made = await automations.findOne({ projectId: 'widgets', name: 'Weekly notes' });
    await page.getByRole('button', { name: 'Edit Weekly notes' }).click();
    await page.getByLabel('Name').first().fill('Monday notes');
    await page.getByLabel('Trigger (JSON', { exact: false }).fill('{"type":"schedule","cron":"0 6 * * 1","timeZone":"Europe/Berlin"}');
    await page.getByLabel('Context repositories', { exact: false }).fill('acme/widgets-docs@main');
    await page.getByRole('button', { name: 'Save automation' }).click();
    await page.getByRole('status').filter({ hasText: 'Automation saved' }).waitFor();
    expect(await automations.findOne({ _id: made!._id })).toMatchObject({
      name: 'Monday notes',
      trigger: { type: 'schedule', cron: '0 6 * * 1', timeZone: 'Europe/Berlin' },
      contextRepositories: [{ repo: 'acme/widgets-docs', ref: 'main' }],
    });

    const dialog = page.getByRole('dialog', { name: 'Delete the automation Monday notes?' });
    await page.getByRole('button', { name: 'Delete Monday notes' }).click();
    expect(await dialog.textContent()).toContain('its run history is deleted. The jobs it started stay.');
    await checkPage(page, 'automation-delete-dialog');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    // A later call answered: the cancelled delete sent nothing before it.
    await page.getByRole('button', { name: 'Runs of Monday notes' }).click();
    await page.getByTestId('runs').waitFor();
    expect(await automations.findOne({ _id: made!._id })).not.toBeNull();
    await page.getByRole('button', { name: 'Delete Monday notes' }).click();
    await dialog.getByRole('button', { name: 'Delete automation' }).click();
    await page.getByRole('status').filter({ hasText: 'Automation Monday notes deleted' }).waitFor();
    expect(await automations.findOne({ _id: made!._id })).toBeNull();
    await page.getByText('No automations.').waitFor();
  });

  it("lists a webhook endpoint's deliveries and redelivers a refused one", async () => {
    await go(page, '#/p/widgets/webhooks', 'Webhooks · widgets');
    const refused = await poll('a refused delivery', () => receiver.received.find((r) => r.verified && r.status === 500), Boolean, 60_000);
    await page.getByRole('button', { name: /^Deliveries of / }).click();
    await page.getByTestId('deliveries').waitFor();
    expect(await page.getByTestId('deliveries').locator('tbody tr').filter({ hasText: refused!.id }).first().textContent()).toContain('500 (failed)');
    await checkPage(page, 'webhooks');
    receiverTakes = true;
    await page
      .getByRole('button', { name: `Redeliver ${refused!.id}` })
      .first()
      .click();
    await page.getByRole('status').filter({ hasText: 'Redelivery started' }).waitFor();
    await poll('the redelivery', () => receiver.received.find((r) => r.id === refused!.id && r.status === 204), Boolean, 60_000);
  });

  it('shows a question asked in the widget, with its search hits and the source the reader opened, in the analytics', async () => {
    // The cited docs pages are not served in this test: the opened tab gets a stand-in.
    await browser.route('https://docs.npmjs.com/**', (r) => r.fulfill({ contentType: 'text/html', body: '<title>npm docs</title>' }));
    const site = await browser.newPage();
    pageErrors.watch(site, docsSite.origin);
    let hits = 0;
    let opened = '';
    try {
      await site.goto(`${docsSite.origin}/guide/`);
      await site.locator('docent-assistant .launcher').click();
      await site.locator('docent-assistant textarea[name=question]').fill(question);
      await site.keyboard.press('Enter');
      await site.waitForFunction(
        `(() => { const root = document.querySelector('docent-assistant').shadowRoot; return root.querySelectorAll('.msg.assistant').length === 1 && root.querySelector('dialog').dataset.status === 'ready'; })()`,
        undefined,
        { timeout: 60_000 },
      );
      const sources = site.locator('docent-assistant .msg.assistant .sources a');
      hits = await sources.count();
      opened = new URL((await sources.first().getAttribute('href'))!).pathname.slice(1);
      const popup = site.waitForEvent('popup');
      await sources.first().click();
      await (await popup).close();
    } finally {
      await site.close();
    }
    expect(hits).toBeGreaterThan(0);
    // The widget reports the click without waiting for it; the table is read once it is stored.
    await poll('the reported click', () => gw.deps.mongo.db.collection('searches').findOne({ query: question, 'clicks.0': { $exists: true } }), Boolean);

    await go(page, '#/p/widgets/analytics', 'Analytics · widgets');
    expect(await page.getByTestId('volume').locator('tbody td').first().textContent()).toBe('1');
    expect(await page.getByRole('table').filter({ hasText: question }).count()).toBeGreaterThan(0);
    const today = new Date().toISOString().slice(0, 10);
    expect(await page.getByTestId('per-day').locator('tbody tr').filter({ hasText: today }).locator('td').allTextContents()).toEqual([today, '1', '1', '0', '']);
    expect(await page.getByTestId('conversations').locator('tbody tr').first().locator('td').allTextContents()).toEqual([expect.any(String), question, 'answered', '—']);
    const row = page.getByTestId('searches').locator('tbody tr').filter({ hasText: question });
    expect(await row.locator('td').allTextContents()).toEqual([question, '1', String(hits), '1', '100%', `${opened} (1)`, expect.any(String)]);
    await checkPage(page, 'analytics');
  });

  it('shows the audit log of the calls the console made, the other project pages, and asks the docs from the Docs page', async () => {
    await go(page, '#/audit', 'Audit log');
    const calls = await page.getByTestId('audit').locator('tbody tr td:nth-child(3)').allTextContents();
    expect(calls).toEqual(expect.arrayContaining(['POST /v2/admin/projects', 'POST /v2/admin/projects/{projectId}/keys', 'POST /console/session']));
    await checkPage(page, 'audit');
    for (const [hash, heading, name] of [['#/p/widgets/github', 'GitHub deliveries · widgets', 'github-deliveries']] as const) {
      await go(page, hash, heading);
      await checkPage(page, name);
    }
    // The Docs page: the widget's snippet, and an Ask box on the project's domain with an assistant key typed in.
    await go(page, '#/p/widgets/docs', 'Docs · widgets');
    expect(await page.getByTestId('snippet').textContent()).toContain(`data-domain="${domain}"`);
    await page.getByLabel('Assistant key (used for this question, not stored)').fill(assistantKey);
    await page.getByLabel('Question', { exact: true }).fill('How do I install without changing the lockfile?');
    await page.getByRole('button', { name: 'Ask', exact: true }).click();
    await page.getByTestId('ask-answer').getByText('repeatable install').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('ask-sources').locator('a').count()).toBeGreaterThan(0);
    // Beside the answer, the passages the search retrieves for the question, each with its score.
    await page.getByTestId('ask-passages').locator('li').first().waitFor();
    expect(await page.getByTestId('ask-passages').locator('li strong').first().textContent()).toBe('1.00');
    expect(await seriousViolations(page)).toEqual([]);
  });

  it("shows docent.local's health on the Docs page: its page and passage counts, its last ingest, and each page's passages", async () => {
    const served = (await (await fetch(`${gw.url}/v2/admin/docs/docent.local`, { headers: { authorization: `Bearer ${operatorKey}` } })).json()) as { pages: number; passages: number };
    expect(served.pages).toBeGreaterThan(1);
    await go(page, '#/p/docent/docs', 'Docs · docent');
    await page.getByTestId('docs-pages').filter({ hasText: /^\d+$/ }).waitFor();
    expect(await page.getByTestId('docs-pages').textContent()).toBe(String(served.pages));
    expect(await page.getByTestId('docs-passages').textContent()).toBe(String(served.passages));
    expect(await page.getByTestId('docs-last-ingest').textContent()).toMatch(new RegExp(`: completed in [\\d.]+ s, ${served.pages} pages, ${served.passages} passages`));
    expect(await page.getByTestId('docs-status').textContent()).toContain('Nothing is followed');
    // The page browser lists every page; one opened shows its passages.
    const listed = page.getByTestId('docs-page-list').getByRole('button');
    await listed.first().waitFor();
    expect(await listed.count()).toBe(served.pages);
    await listed.first().click();
    await page.getByTestId('docs-page-passages').locator('li').first().waitFor();
    await checkPage(page, 'docs-health');
  });

  it('follows a docs repository from the Docs page, syncs it now and shows what each sync did', async () => {
    await go(page, '#/p/widgets/docs', 'Docs · widgets');
    expect(await page.getByTestId('docs-status').textContent()).toContain('Nothing is followed');
    const follow = page.getByRole('form', { name: 'Follow a docs repository' });
    await follow.getByLabel('Repository (owner/name or a git URL)').fill('acme/widgets-docs');
    await follow.getByLabel('Docs folder in the repository (empty for all of it)').fill('docs');
    await follow.getByRole('button', { name: 'Follow a docs repository' }).click();
    // The first sync starts at once on the worker; the page reads the status again until it has ended.
    await page.getByTestId('docs-status').filter({ hasText: 'acme/widgets-docs@main:docs' }).waitFor();
    await page
      .getByTestId('docs-last-success')
      .filter({ hasText: /^2 pages indexed/ })
      .waitFor({ timeout: 120_000 });
    expect(await page.getByTestId('docs-last').textContent()).toMatch(/: completed in [\d.]+ s$/);
    expect(await page.getByTestId('docs-running').textContent()).toBe('idle');

    // A page added to the repository is in the index after Sync now, which shows what that sync did.
    await git.commitFiles('acme', 'widgets-docs', { 'docs/cleaning.md': '# Cleaning the sprocket\n\nWipe the gear teeth with a dry cloth after each run.\n' });
    await page.getByRole('button', { name: 'Sync now' }).click();
    await page
      .getByTestId('sync-result')
      .filter({ hasText: /^This sync: 3 pages indexed/ })
      .waitFor({ timeout: 120_000 });
    expect(await page.getByTestId('sync-result').textContent()).toContain('1 read again, 0 removed');
    await page
      .getByTestId('docs-last-success')
      .filter({ hasText: /^3 pages indexed/ })
      .waitFor();
    const headers = { authorization: `Bearer ${assistantKey}`, 'content-type': 'application/json' };
    const found = (await (await fetch(`${gw.url}/discovery/v1/search/${domain}/results`, { method: 'POST', headers, body: JSON.stringify({ query: 'wipe the gear teeth' }) })).json()) as {
      results: Array<{ path: string }>;
    };
    expect(found.results.map((r) => r.path)).toContain('cleaning');
    await checkPage(page, 'docs');

    // Stopping asks first: cancelled, the domain is still followed; accepted, its schedule is gone.
    const followStatus = async () => (await (await fetch(`${gw.url}/v2/admin/docs/${domain}`, { headers: { authorization: `Bearer ${operatorKey}` } })).json()) as { followed: boolean };
    const stopping = page.getByRole('dialog', { name: `Stop following for ${domain}?` });
    await page.getByRole('button', { name: 'Stop following' }).click();
    await stopping.getByRole('button', { name: 'Cancel' }).click();
    expect((await followStatus()).followed).toBe(true);
    await page.getByRole('button', { name: 'Stop following' }).click();
    await stopping.getByRole('button', { name: 'Stop following' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `${domain} is no longer followed` })
      .waitFor();
    expect((await followStatus()).followed).toBe(false);
  });

  it('an origin added to the existing project in the console lets the widget answer on that site', async () => {
    const other = await serveDocsSite();
    const site = await browser.newPage();
    pageErrors.watch(site, other.origin);
    const ask = async () => {
      await site.goto(`${other.origin}/guide/`);
      await site.locator('docent-assistant .launcher').click();
      await site.locator('docent-assistant textarea[name=question]').fill('How do I install the sprocket?');
      await site.keyboard.press('Enter');
    };
    try {
      await ask();
      await site
        .locator('docent-assistant [role=alert]')
        .filter({ hasText: `This site (${other.origin}) may not use the assistant` })
        .waitFor();
      await go(page, '#/p/widgets', 'Project widgets');
      await page.getByLabel(/^Origins whose pages may use the assistant/).fill(`${docsSite.origin}\n${other.origin}`);
      await page.getByRole('button', { name: 'Save origins' }).click();
      await page.getByRole('status').filter({ hasText: 'Origins saved' }).waitFor();
      await ask();
      await site.locator('docent-assistant .msg.assistant').filter({ hasText: 'npm ci' }).waitFor({ timeout: 60_000 });
      expect(await site.locator('docent-assistant [role=alert]').filter({ hasText: 'may not use the assistant' }).count()).toBe(0);
    } finally {
      await site.close();
      await other.close();
    }
  });

  it('moves a project to another domain, then deletes it and its organization, each delete asking first', async () => {
    const asOperator = { authorization: `Bearer ${operatorKey}`, 'content-type': 'application/json' };
    const made = await fetch(`${gw.url}/v2/admin/projects`, {
      method: 'POST',
      headers: asOperator,
      body: JSON.stringify({ id: 'scratch', orgId: 'ux-org', repository: 'acme/widgets', ref: 'main', domain: 'scratch.ux.test' }),
    });
    expect(made.status).toBe(201);
    await go(page, '#/p/scratch', 'Project scratch');
    await page.getByLabel('Documentation domain (its assistant keys move with it)').fill('moved.ux.test');
    await page.getByRole('button', { name: 'Save repository and domain' }).click();
    await page.getByRole('status').filter({ hasText: 'Repository and domain saved' }).waitFor();
    expect((await gw.deps.tenancy.getProject('scratch'))?.domain).toBe('moved.ux.test');

    await page.getByRole('button', { name: 'Delete project' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete the project scratch?' });
    expect(await dialog.textContent()).toContain('Its keys are revoked; its automations (with their schedules and runs), webhook endpoints and secrets are deleted');
    await checkPage(page, 'project-delete-dialog');
    await dialog.getByRole('button', { name: 'Delete project' }).click();
    await heading(page, 'Projects');
    expect(await gw.deps.tenancy.getProject('scratch')).toBeNull();

    await page.getByRole('button', { name: 'Delete organization ux-org' }).click();
    await page.getByRole('dialog', { name: 'Delete the organization ux-org?' }).getByRole('button', { name: 'Delete organization' }).click();
    await page.getByRole('status').filter({ hasText: 'Organization ux-org deleted' }).waitFor();
    expect(await gw.deps.tenancy.hasOrg('ux-org')).toBe(false);
  });

  it('signs out: the session ends on the server and the old cookie is refused', async () => {
    const [cookie] = await browser.cookies(gw.url);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await browser.cookies(gw.url)).toEqual([]);
    const old = await fetch(`${gw.url}/v2/admin/projects`, { headers: { cookie: `${cookie!.name}=${cookie!.value}` } });
    expect(old.status).toBe(401);
    expect(await old.json()).toMatchObject({ code: 'unauthenticated' });
  });
});
