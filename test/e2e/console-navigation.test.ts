import { rm } from 'node:fs/promises';
import type { BrowserContext, Page } from 'playwright-core';
import { seriousViolations } from '../support/axe';
import { launchChromium, PageErrors } from '../support/chromium';
import { startGateway, type RunningGateway } from '../support/gateway';

// Getting around the console as a keyboard user and on a phone: Debian's chromium against the real gateway (no worker:
// these pages only read). Where focus goes, what marks the current page and project, and that no page is wider than 390 px.

let gw: RunningGateway;
let browser: BrowserContext;
let profileDir: string;
let operatorKey: string;
const pageErrors = new PageErrors();

beforeAll(async () => {
  gw = await startGateway();
  await gw.deps.tenancy.createOrg('navorg');
  for (const id of ['nav-one', 'nav-two']) await gw.deps.tenancy.createProject({ _id: id, orgId: 'navorg', repository: `navorg/${id}-repository-with-a-long-name`, ref: 'main' });
  operatorKey = (await gw.deps.keys.create({ kind: 'operator', orgId: '*' })).key;
  ({ browser, profileDir } = await launchChromium({ viewport: { width: 1280, height: 900 } }));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
  if (profileDir) await rm(profileDir, { recursive: true, force: true });
});

afterEach(() => expect(pageErrors.take()).toEqual([]));

/** What has focus: its tag and its text, as a user of a screen reader would hear it announced. */
const focused = (page: Page) => page.evaluate('(() => { const e = document.activeElement; return { tag: e.tagName.toLowerCase(), text: (e.textContent || "").trim() }; })()');
const heading = (page: Page, name: string | RegExp) => page.getByRole('heading', { level: 1, name }).waitFor({ timeout: 30_000 });

async function signIn(page: Page) {
  await page.goto(`${gw.url}/console/`);
  await page.getByLabel('Operator key or project admin key').fill(operatorKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await heading(page, 'Projects');
}

describe('getting around the console', () => {
  let page: Page;
  beforeAll(async () => {
    page = await browser.newPage();
    pageErrors.watch(page, 'console');
    await signIn(page);
  });
  afterAll(() => page?.close());

  it('puts focus on the page heading after sign-in and after each move, and the skip link is the first stop', async () => {
    expect(await focused(page)).toEqual({ tag: 'h1', text: 'Projects' });
    await page.getByRole('link', { name: 'nav-one' }).click();
    await heading(page, 'Project nav-one');
    expect(await focused(page)).toEqual({ tag: 'h1', text: 'Project nav-one' });
    // The skip link comes first in the tab order, shows when focused, and moves focus past both bars to the page.
    const firstStop = 'document.querySelector("a[href], button, input, select, textarea, [tabindex]:not([tabindex=\'-1\'])").textContent';
    expect(await page.evaluate(firstStop)).toBe('Skip to content');
    const skip = page.getByRole('link', { name: 'Skip to content' });
    await skip.focus();
    expect((await skip.boundingBox())!.y).toBeGreaterThanOrEqual(0);
    await page.keyboard.press('Enter');
    expect(await focused(page)).toEqual({ tag: 'h1', text: 'Project nav-one' });
    expect(page.url()).toMatch(/#\/p\/nav-one$/);
  });

  it('shows the current project in a bar of its own, marks the current tab, and switches project on the same tab', async () => {
    const projectNav = page.getByRole('navigation', { name: 'Project' });
    await projectNav.getByRole('link', { name: 'Jobs' }).click();
    await heading(page, 'Jobs · nav-one');
    const current = projectNav.locator('a[aria-current=page]');
    expect(await current.allTextContents()).toEqual(['Jobs']);
    // Marked so a sighted user sees it too, not only a screen reader.
    const weight = (name: string) =>
      projectNav.getByRole('link', { name }).evaluate((a) => (globalThis as unknown as { getComputedStyle(e: unknown): { fontWeight: string } }).getComputedStyle(a).fontWeight);
    expect(Number(await weight('Jobs'))).toBeGreaterThan(Number(await weight('Keys')));
    // The global bar has no project tabs; it marks nothing while a project's page is open.
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Jobs' }).count()).toBe(0);
    expect(await page.getByRole('navigation', { name: 'Main' }).locator('a[aria-current]').count()).toBe(0);

    const picker = page.getByRole('combobox', { name: 'Project' });
    expect(await picker.inputValue()).toBe('nav-one');
    await picker.selectOption('nav-two');
    await heading(page, 'Jobs · nav-two');
    expect(page.url()).toMatch(/#\/p\/nav-two\/jobs$/);
    expect(await focused(page)).toEqual({ tag: 'h1', text: 'Jobs · nav-two' });

    // A job's page belongs to the Jobs tab: marked as its section, not as the page itself.
    await page.evaluate('location.hash = "#/p/nav-two/jobs/no-such-job"');
    await heading(page, 'Job no-such-job');
    expect(await projectNav.locator('a[aria-current=true]').allTextContents()).toEqual(['Jobs']);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit log' }).click();
    await heading(page, 'Audit log');
    expect(await page.getByRole('navigation', { name: 'Main' }).locator('a[aria-current=page]').allTextContents()).toEqual(['Audit log']);
    expect(await page.locator('#project-bar').isHidden()).toBe(true);
  });

  it('fits a 390 px screen on every page: tables scroll inside their box, never the page', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    const pages: Array<[string, string | RegExp]> = [
      ['#/projects', 'Projects'],
      ['#/p/nav-one', 'Project nav-one'],
      ['#/p/nav-one/keys', 'Keys · nav-one'],
      ['#/p/nav-one/jobs', 'Jobs · nav-one'],
      ['#/p/nav-one/automations', 'Automations · nav-one'],
      ['#/p/nav-one/docs', /^Docs/],
      ['#/p/nav-one/analytics', /^Analytics/],
      ['#/p/nav-one/webhooks', /^Webhooks/],
      ['#/p/nav-one/github', /^GitHub deliveries/],
      ['#/audit', 'Audit log'],
      ['#/forges', 'Forge connections'],
    ];
    for (const [hash, name] of pages) {
      await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
      await heading(page, name);
      await page.getByText('Loading…').waitFor({ state: 'detached' });
      const width = await page.evaluate('document.documentElement.scrollWidth');
      expect({ hash, width }).toEqual({ hash, width: 390 });
      expect({ hash, violations: await seriousViolations(page) }).toEqual({ hash, violations: [] });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });
});

describe('the gateway’s icon', () => {
  it.each([
    ['/favicon.ico', 'image/x-icon', [0, 0, 1, 0]],
    ['/favicon.svg', 'image/svg+xml', [...Buffer.from('<svg')]],
  ])('answers %s with an image', async (p, type, opening) => {
    const r = await fetch(`${gw.url}${p}`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain(type);
    expect([...new Uint8Array(await r.arrayBuffer()).slice(0, opening.length)]).toEqual(opening);
  });
});

describe('the playground’s forms', () => {
  it('labels the job’s instruction and gives it the form’s width, and every field has a name', async () => {
    const page = await browser.newPage();
    pageErrors.watch(page, 'playground');
    await page.goto(`${gw.url}/playground/?domain=docent.local&project=nav-one`);
    const instruction = page.getByLabel('Instruction');
    await instruction.waitFor();
    expect((await instruction.boundingBox())!.width).toBeGreaterThan(300);
    expect(await page.getByLabel('Question').count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
    await page.close();
  });
});
