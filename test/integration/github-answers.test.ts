import { Octokit } from '@octokit/rest';
import { createGitHubActivities } from '../../activities/agent-job/github';
import { createGapCheckActivities, type GapCheckDeps } from '../../activities/docs-gap-check';
import { gapCheckComment } from '../../activities/gap-check-comment';
import type { GapCheckResult } from '../../workflows/docs-gap-check-contract';
import { ForgeRegistry } from '../../src/forges/forge-registry';
import { GitHubAppNotInstalled, GitHubAppRefused, GitHubCredentials } from '../../src/github/credentials';
import { HiddenText } from '../../src/config';
import type { CheckResult } from '../../workflows/agent-job-contract';
import { createTestApp, type TestApp } from '../support/github-app-double';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';

// The GitHub activities against the GitHub double as GitHub answers: with a personal token (commit statuses) and as
// an App (installation lookups and the token cache), and GitHub's refusals that are final.

const token = 'ghs_answerstesttoken0123456789';
let git: GitServer;
let tokenGitHub: GitHubDouble;
let appGitHub: GitHubDouble;
let app: TestApp;

const checks: CheckResult[] = [
  { kind: 'check', command: 'npm test', exitCode: 0, durationMs: 1200, output: 'ok\n' },
  { kind: 'check', command: 'npm run lint', exitCode: 1, durationMs: 800, output: 'src/a.ts: 2 problems\n' },
];

beforeAll(async () => {
  git = await startGitServer(token);
  await git.createRepo('acme', 'widgets', { 'README.md': 'hello\n' });
  await git.createRepo('acme', 'tools', { 'README.md': 'tools\n' });
  for (const branch of ['docent/draft-refused', 'docent/asked-draft', 'docent/forbidden', 'docent/paged']) await git.git('acme', 'widgets', 'branch', branch, 'main');
  tokenGitHub = await startGitHubDouble({ token, ...backedBy(git) });
  app = createTestApp();
  appGitHub = await startGitHubDouble({ app, ...backedBy(git) });
});

afterAll(async () => {
  await Promise.all([git.close(), tokenGitHub.close(), appGitHub.close()]);
});

const withToken = () => createGitHubActivities({ gitBaseUrl: git.url, forges: new ForgeRegistry(undefined, { apiUrl: tokenGitHub.apiUrl, gitUrl: git.url, token }) });
const appCredentials = () => new GitHubCredentials({ apiUrl: appGitHub.apiUrl, gitUrl: git.url, app: { id: app.id, privateKey: new HiddenText(app.privateKeyPem) } });

describe('with a personal token', () => {
  it('reports checks as the commit status `docent`, failure when one failed', async () => {
    const sha = (await git.git('acme', 'widgets', 'rev-parse', 'main')).trim();
    await expect(withToken().reportChecks({ repository: 'acme/widgets', commit: sha, checks })).resolves.toEqual({ reported: 'commit-status' });
    expect(tokenGitHub.statuses).toEqual([{ sha, state: 'failure', context: 'docent', description: '1 of 2 checks failed' }]);
    expect(tokenGitHub.checkRuns).toEqual([]);
  });

  it('a draft GitHub refuses opens ready as [checks failing] when checks failed, and under its own title when a draft was only asked for', async () => {
    tokenGitHub.refuseDrafts();
    const failing = await withToken().openPullRequest({ repository: 'acme/widgets', branch: 'docent/draft-refused', baseRef: 'main', title: 'Fix lint', body: 'Did it.', draft: true, checks });
    const asked = await withToken().openPullRequest({ repository: 'acme/widgets', branch: 'docent/asked-draft', baseRef: 'main', title: 'Tidy', body: 'Tidied.', draft: true, checks: [checks[0]!] });
    tokenGitHub.refuseDrafts(false);
    const byNumber = (n: number) => tokenGitHub.pulls.find((p) => p.number === n)!;
    expect(byNumber(failing.number)).toMatchObject({ title: '[checks failing] Fix lint', draft: false });
    expect(byNumber(failing.number).body).toContain('1 of 2 failed, so this pull request is not ready for review');
    expect(byNumber(asked.number)).toMatchObject({ title: 'Tidy', draft: false });
  });

  it('a 403 without rate-limit headers is final: no retry, the job learns GitHub refused', async () => {
    const before = tokenGitHub.calls.filter((c) => c.method === 'POST').length;
    tokenGitHub.refuseNextCreate();
    await expect(withToken().openPullRequest({ repository: 'acme/widgets', branch: 'docent/forbidden', baseRef: 'main', title: 'x', body: 'y', draft: false })).rejects.toMatchObject({
      type: 'PullRequestRejected',
      nonRetryable: true,
    });
    expect(tokenGitHub.calls.filter((c) => c.method === 'POST').length - before).toBe(1);
  });

  it('lists are read page by page: a gap-check comment already on the third page is not posted twice', async () => {
    // Reviewers' comments, posted by another client.
    const octokit = new Octokit({ auth: token, baseUrl: tokenGitHub.apiUrl });
    const pr = await withToken().openPullRequest({ repository: 'acme/widgets', branch: 'docent/paged', baseRef: 'main', title: 'Docs', body: 'Docs.', draft: false });
    const result: GapCheckResult = { turn: 1, commit: 'c'.repeat(40), previewIndex: 'p', checkedAt: new Date().toISOString(), questions: [], fixed: 0 };
    for (const body of ['first review', 'second review', gapCheckComment('job_paged', result)])
      await octokit.rest.issues.createComment({ owner: 'acme', repo: 'widgets', issue_number: pr.number, body });
    tokenGitHub.setMaxPerPage(1);
    // Only what this call uses: the gap check's other activities need Elasticsearch and the job ledger.
    const gapCheck = createGapCheckActivities({ gitBaseUrl: git.url, forges: new ForgeRegistry(undefined, { apiUrl: tokenGitHub.apiUrl, gitUrl: git.url, token }) } as Pick<
      GapCheckDeps,
      'gitBaseUrl' | 'forges'
    > as GapCheckDeps);
    await gapCheck.commentOnPullRequest({ repository: 'acme/widgets', pullRequest: pr.number, jobId: 'job_paged', result });
    tokenGitHub.setMaxPerPage(100);
    expect(tokenGitHub.comments.filter((c) => c.issue === pr.number)).toHaveLength(3);
    expect(tokenGitHub.calls.filter((c) => c.method === 'GET' && c.path.endsWith(`/issues/${pr.number}/comments`))).toHaveLength(3);
  });

  it('a rate limit outside any activity window is left to Temporal: a retryable failure, not a refusal', async () => {
    tokenGitHub.rateLimitNext('POST', /\/statuses\//, { status: 403, retryAfterSeconds: 30 });
    const sha = (await git.git('acme', 'widgets', 'rev-parse', 'main')).trim();
    await expect(withToken().reportChecks({ repository: 'acme/widgets', commit: sha, checks })).rejects.toMatchObject({ type: 'GitHubUnavailable', nonRetryable: false });
  });
});

describe('as a GitHub App', () => {
  it('names the install URL for a repository without the installation, and finds it once installed', async () => {
    const credentials = appCredentials();
    const refused = credentials.access('acme', 'tools');
    await expect(refused).rejects.toBeInstanceOf(GitHubAppNotInstalled);
    await expect(refused).rejects.toThrow(`install it at https://github.test/apps/${app.slug}/installations/new`);
    appGitHub.install('acme', 'tools');
    await expect(credentials.access('acme', 'tools')).resolves.toMatchObject({ mode: 'app', gitToken: expect.stringMatching(/^ghs_/) });
  });

  it("a key that is not the App's is refused by GitHub: the error names the settings to check", async () => {
    const impostor = createTestApp(app.id);
    const credentials = new GitHubCredentials({ apiUrl: appGitHub.apiUrl, gitUrl: git.url, app: { id: app.id, privateKey: new HiddenText(impostor.privateKeyPem) } });
    const refused = credentials.access('acme', 'tools');
    await expect(refused).rejects.toBeInstanceOf(GitHubAppRefused);
    await expect(refused).rejects.toThrow("GitHub refused the App's JWT: check DOCENT_GITHUB_APP_ID, its private key and this machine's clock");
    expect(appGitHub.rejected.at(-1)).toBe('401 A JSON web token could not be verified');
  });

  it('asks for one token per repository and reuses it while it is fresh, one request for steps that start together', async () => {
    appGitHub.install('acme', 'widgets');
    const credentials = appCredentials();
    const before = appGitHub.tokenRequests.length;
    const [first, together] = await Promise.all([credentials.access('acme', 'widgets'), credentials.access('acme', 'widgets')]);
    const again = await credentials.access('acme', 'widgets');
    expect(together.gitToken).toBe(first.gitToken);
    const other = await credentials.access('acme', 'tools');
    expect(again.gitToken).toBe(first.gitToken);
    expect(other.gitToken).not.toBe(first.gitToken);
    expect(appGitHub.tokenRequests.slice(before)).toEqual([
      { installationId: expect.any(Number), repositories: ['widgets'], permissions: { contents: 'write', pull_requests: 'write', checks: 'write', issues: 'write' } },
      { installationId: expect.any(Number), repositories: ['tools'], permissions: { contents: 'write', pull_requests: 'write', checks: 'write', issues: 'write' } },
    ]);
    // The widgets token cannot reach tools.
    expect(appGitHub.gitAllows(first.gitToken!, 'acme', 'tools', false)).toBe(false);
  });

  it('a check run already completed for the commit (an activity retried after it finished) is not reported twice', async () => {
    const activities = createGitHubActivities({
      gitBaseUrl: git.url,
      forges: new ForgeRegistry(undefined, { apiUrl: appGitHub.apiUrl, gitUrl: git.url, app: { id: app.id, privateKey: new HiddenText(app.privateKeyPem) } }),
    });
    const sha = (await git.git('acme', 'widgets', 'rev-parse', 'main')).trim();
    await activities.reportChecks({ repository: 'acme/widgets', commit: sha, checks });
    await activities.reportChecks({ repository: 'acme/widgets', commit: sha, checks });
    expect(appGitHub.checkRuns.filter((r) => r.headSha === sha)).toEqual([expect.objectContaining({ name: 'docent', conclusion: 'failure', statusHistory: ['in_progress', 'completed'] })]);
  });
});
