import { rm } from 'node:fs/promises';
import type { BrowserContext, Page } from 'playwright-core';
import { seriousViolations } from '../support/axe';
import { launchChromium, PageErrors } from '../support/chromium';
import { startGateway, type RunningGateway } from '../support/gateway';
import { access, type GitLabDouble, startGitLabDouble } from '../support/gitlab-double';

// The console's forge page connects an organization to GitLab (and Gitea/Forgejo) as well as GitHub: Debian's chromium
// against the real gateway, which tests the token against the GitLab double (checking requests as GitLab does).

let gw: RunningGateway;
let gitlab: GitLabDouble;
let browser: BrowserContext;
let profileDir: string;
let operatorKey: string;
let gitlabToken: string;
const pageErrors = new PageErrors();

beforeAll(async () => {
  gitlab = await startGitLabDouble();
  await gitlab.createProject('forgeorg/site', { 'README.md': '# Site\n' });
  gitlabToken = gitlab.addUser('docent-bot', { 'forgeorg/site': access.maintainer }).token;
  gw = await startGateway({ DOCENT_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8', DOCENT_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') });
  await gw.deps.tenancy.createOrg('forgeorg');
  operatorKey = (await gw.deps.keys.create({ kind: 'operator', orgId: '*' })).key;
  ({ browser, profileDir } = await launchChromium({ viewport: { width: 1280, height: 900 } }));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
  await gitlab?.close();
  if (profileDir) await rm(profileDir, { recursive: true, force: true });
});

afterEach(() => expect(pageErrors.take()).toEqual([]));

describe('the forge page', () => {
  let page: Page;
  beforeAll(async () => {
    page = await browser.newPage();
    pageErrors.watch(page, 'console');
    await page.goto(`${gw.url}/console/#/o/forgeorg/forges`);
    await page.getByLabel('Operator key or project admin key').fill(operatorKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Forge connections · forgeorg' }).waitFor();
  });
  afterAll(() => page?.close());

  it('asks each kind for what it takes: GitLab its server and a token, without GitHub’s fields', async () => {
    await page.getByRole('combobox', { name: /^Forge/ }).selectOption('gitlab');
    expect(await page.getByLabel('API URL (GitHub Enterprise; empty: api.github.com)').isHidden()).toBe(true);
    expect(await page.getByLabel('or an installation id of the deployment’s GitHub App').isHidden()).toBe(true);
    await page.getByLabel('Server address (https://gitlab.example.org)').fill(gitlab.url);
    // A token GitLab refuses is refused here too, with the reason, and nothing is added.
    await page.getByLabel('GitLab access token (personal, group or project)').fill('glpat-not-a-real-token');
    await page.getByRole('button', { name: 'Add connection' }).click();
    await page.getByRole('alert').filter({ hasText: /token/i }).waitFor();
    expect(await gw.deps.forges.store.list('forgeorg')).toEqual([]);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('adds a GitLab connection, shows its webhook secret once and lists it as gitlab', async () => {
    await page.getByLabel('GitLab access token (personal, group or project)').fill(gitlabToken);
    await page.getByRole('button', { name: 'Add connection' }).click();
    const secret = page.getByTestId('forge-webhook-secret');
    await secret.waitFor();
    expect(await secret.textContent()).toMatch(/\S{20,}/);
    const row = page.getByTestId('forges').locator('tbody tr');
    expect(await row.count()).toBe(1);
    expect(await row.locator('td').nth(1).textContent()).toBe('gitlab');
    expect(await row.textContent()).toContain(`${gitlab.url}/api/v4`);
    // The token is never shown back.
    expect(await page.content()).not.toContain(gitlabToken);
    expect(await seriousViolations(page)).toEqual([]);
  });
});
