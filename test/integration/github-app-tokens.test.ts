import { GitAccessRefused, repositoryAccess } from '../../src/git/access';
import { GitHubForge } from '../../src/forges/github/github-forge';
import { GitHubCredentials } from '../../src/github/credentials';
import { HiddenText } from '../../src/config';
import { createTestApp, type TestApp } from '../support/github-app-double';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';

// docent's GitHub App credentials against the GitHub double as GitHub behaves over time: tokens that near their
// expiry, tokens GitHub stops taking (expired, or revoked by an uninstall), an App uninstalled and installed again
// under a new installation id, and what an installation grants.

let git: GitServer;
let app: TestApp;
const doubles: GitHubDouble[] = [];

beforeAll(async () => {
  git = await startGitServer('ghs_unused_personal_token_0123456789');
  await git.createRepo('acme', 'widgets', { 'README.md': 'hello\n' });
  app = createTestApp();
});
afterAll(async () => {
  await Promise.all([git.close(), ...doubles.map((d) => d.close())]);
});

async function appGitHub(tokenLifetimeMs?: number): Promise<{ github: GitHubDouble; credentials: GitHubCredentials }> {
  const github = await startGitHubDouble({ app, ...backedBy(git), ...(tokenLifetimeMs ? { tokenLifetimeMs } : {}) });
  doubles.push(github);
  github.install('acme', 'widgets');
  const credentials = new GitHubCredentials({ apiUrl: github.apiUrl, gitUrl: git.url, app: { id: app.id, privateKey: new HiddenText(app.privateKeyPem) } });
  return { github, credentials };
}

/** An API call with the repository's access, as the pull-request activities make them. */
const listPulls = async (credentials: GitHubCredentials) => (await (await credentials.access('acme', 'widgets')).octokit.rest.pulls.list({ owner: 'acme', repo: 'widgets' })).status;

describe('GitHub App installation tokens', () => {
  it('reuses a token with time left, and asks for a new one when less than ten minutes remain', async () => {
    const long = await appGitHub();
    await listPulls(long.credentials);
    await listPulls(long.credentials);
    expect(long.github.tokenRequests).toHaveLength(1);

    // Tokens that live nine minutes are never handed out again: each access renews.
    const short = await appGitHub(9 * 60_000);
    const first = (await short.credentials.access('acme', 'widgets')).gitToken;
    const second = (await short.credentials.access('acme', 'widgets')).gitToken;
    expect(second).not.toBe(first);
    expect(short.github.tokenRequests).toHaveLength(2);
    expect(await listPulls(short.credentials)).toBe(200);
  });

  it('replaces a cached token GitHub no longer takes, once', async () => {
    const { github, credentials } = await appGitHub();
    expect(await listPulls(credentials)).toBe(200);
    github.expireTokens();
    expect(await listPulls(credentials)).toBe(200);
    expect(github.tokenRequests).toHaveLength(2);
    expect(github.rejected).toEqual(['401 Bad credentials']);
  });

  it('finds the App again after it was uninstalled and installed under a new installation id', async () => {
    const { github, credentials } = await appGitHub();
    expect(await listPulls(credentials)).toBe(200);
    const before = github.tokenRequests[0]!.installationId;
    github.uninstall('acme', 'widgets');
    github.install('acme', 'widgets');
    // The cached token was revoked and the cached installation is gone: both are looked up again.
    expect(await listPulls(credentials)).toBe(200);
    const after = github.tokenRequests.at(-1)!.installationId;
    expect(after).not.toBe(before);
    expect(github.rejected).toEqual(['401 Bad credentials', '404 Not Found']);
  });

  it("gives git the installation token for the App's repositories and refuses git access to one it is not installed on", async () => {
    const { github, credentials } = await appGitHub();
    const settings = { gitBaseUrl: git.url, forge: new GitHubForge(credentials), allowPrivateNetworks: [] };
    const access = await repositoryAccess('acme/widgets', settings);
    expect(access.cloneUrl).toBe(`${git.url}/acme/widgets.git`);
    expect(Object.keys(access.config)).toEqual([`http.${git.url}/.extraHeader`]);
    expect(github.tokenRequests).toHaveLength(1);

    const refused = repositoryAccess('acme/gadgets', settings);
    await expect(refused).rejects.toBeInstanceOf(GitAccessRefused);
    await expect(refused).rejects.toMatchObject({ reason: 'credential', message: expect.stringMatching(/the GitHub App is not installed on acme\/gadgets: install it at /) });
  });

  it('gives git a token that only reads when asked for read-only access (a context repository): it may fetch, never push', async () => {
    const { github, credentials } = await appGitHub();
    const settings = { gitBaseUrl: git.url, forge: new GitHubForge(credentials), allowPrivateNetworks: [] };
    const header = Object.values((await repositoryAccess('acme/widgets', settings, { readOnly: true })).config)[0]!;
    const token = Buffer.from(header.replace('Authorization: Basic ', ''), 'base64').toString('utf8').replace('x-access-token:', '');
    expect(github.tokenRequests.at(-1)?.permissions).toEqual({ contents: 'read' });
    expect([github.gitAllows(token, 'acme', 'widgets', false), github.gitAllows(token, 'acme', 'widgets', true)]).toEqual([true, false]);
    // The job's own access keeps its own token, which may push.
    const own = Object.values((await repositoryAccess('acme/widgets', settings)).config)[0]!;
    expect(own).not.toBe(header);
    expect(github.tokenRequests.at(-1)?.permissions).toMatchObject({ contents: 'write' });
  });

  it('is refused a token for permissions the installation does not grant', async () => {
    const { github, credentials } = await appGitHub();
    github.setGrants({ metadata: 'read', contents: 'read', pull_requests: 'write', checks: 'write', issues: 'write' });
    await expect(credentials.access('acme', 'widgets')).rejects.toMatchObject({ status: 422 });
    expect(github.rejected.at(-1)).toBe('422 The permissions requested are not granted to this installation.');
  });
});
