import { createSign } from 'node:crypto';
import { createTestApp, type TestApp } from '../support/github-app-double';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';

// The GitHub double's credentials as GitHub treats them: personal tokens that reach only their owners' repositories
// (404 for any other, as for a private repository a token cannot see), the one token reaching all, GET /user and
// GET /repos/{owner}/{repo} with the credential's permissions, an App installed per owner, and git over the same rules.

const ALICE = 'github_pat_alice_0123456789abcdef';
const BOB = 'github_pat_bob_read_only_0123456789';
const LEGACY = 'ghp_legacy_reaches_everything_0123';

let git: GitServer;
let github: GitHubDouble;
let app: TestApp;
let appGitHub: GitHubDouble;

beforeAll(async () => {
  git = await startGitServer('ghs_git_server_own_token_unused_here');
  await git.createRepo('alice', 'notes', { 'README.md': '# Notes\n' });
  await git.createRepo('bob', 'tools', { 'README.md': '# Tools\n' });
  await git.createRepo('bob-org', 'site', { 'README.md': '# Site\n' });
  github = await startGitHubDouble({ token: LEGACY, tokens: { [ALICE]: ['Alice'], [BOB]: ['bob', 'bob-org'] }, tokenPermissions: { [BOB]: 'read' }, ...backedBy(git) });
  git.acceptTokens(github.gitAllows);
  app = createTestApp();
  appGitHub = await startGitHubDouble({ app, ...backedBy(git) });
});
afterAll(async () => {
  await Promise.all([git?.close(), github?.close(), appGitHub?.close()]);
});

const api = async (double: GitHubDouble, method: string, path: string, auth?: string, body?: unknown) => {
  const res = await fetch(`${double.apiUrl}${path}`, {
    method,
    headers: { accept: 'application/vnd.github+json', ...(auth ? { authorization: `Bearer ${auth}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

const writePermissions = { admin: false, maintain: false, push: true, triage: true, pull: true };
const readPermissions = { admin: false, maintain: false, push: false, triage: false, pull: true };

describe('personal tokens', () => {
  it('GET /repos/{owner}/{repo}: the repository, private, with what the token may do on it', async () => {
    const own = await api(github, 'GET', '/repos/alice/notes', ALICE);
    expect(own).toEqual({
      status: 200,
      body: {
        id: expect.any(Number),
        name: 'notes',
        full_name: 'alice/notes',
        owner: { login: 'alice' },
        private: true,
        default_branch: 'main',
        html_url: 'https://github.test/alice/notes',
        clone_url: 'https://github.test/alice/notes.git',
        permissions: writePermissions,
      },
    });
    // The same id every time; a read-only token does not push.
    expect((await api(github, 'GET', '/repos/alice/notes', LEGACY)).body).toMatchObject({ id: own.body.id, permissions: writePermissions });
    expect((await api(github, 'GET', '/repos/bob/tools', BOB)).body).toMatchObject({ full_name: 'bob/tools', permissions: readPermissions });
    expect((await api(github, 'GET', '/repos/bob-org/site', BOB)).body).toMatchObject({ full_name: 'bob-org/site', permissions: readPermissions });
  });

  it("another owner's repository is 404 on every repository route; a repository that does not exist too", async () => {
    const before = github.rejected.length;
    const sha = (await git.git('bob', 'tools', 'rev-parse', 'main')).trim();
    const answers = [
      await api(github, 'GET', '/repos/bob/tools', ALICE),
      await api(github, 'GET', '/repos/bob/tools/pulls', ALICE),
      await api(github, 'POST', '/repos/bob/tools/pulls', ALICE, { title: 't', head: 'x', base: 'main' }),
      await api(github, 'GET', '/repos/bob/tools/issues/1/comments', ALICE),
      await api(github, 'POST', `/repos/bob/tools/statuses/${sha}`, ALICE, { state: 'success' }),
      await api(github, 'GET', '/repos/alice/notes', BOB),
      await api(github, 'GET', '/repos/alice/missing', ALICE),
    ];
    expect(answers.map((a) => [a.status, a.body.message])).toEqual(Array(answers.length).fill([404, 'Not Found']));
    expect(github.rejected.slice(before)).toEqual(Array(answers.length).fill('404 Not Found'));
    // The owners are case-insensitive: Alice's token was given as `Alice`.
    expect((await api(github, 'GET', '/repos/alice/notes/pulls', ALICE)).status).toBe(200);
  });

  it('a read-only token reads and is refused writes; the one token reaches every owner', async () => {
    expect((await api(github, 'GET', '/repos/bob/tools/pulls', BOB)).status).toBe(200);
    expect(await api(github, 'POST', '/repos/bob/tools/pulls', BOB, { title: 't', head: 'main', base: 'main' })).toMatchObject({
      status: 403,
      body: { message: 'Resource not accessible by personal access token' },
    });
    expect((await api(github, 'GET', '/repos/bob/tools/pulls', LEGACY)).status).toBe(200);
    expect((await api(github, 'GET', '/repos/bob-org/site', LEGACY)).status).toBe(200);
  });

  it('without credentials a private repository is 404; an unknown token is 401', async () => {
    expect(await api(github, 'GET', '/repos/alice/notes')).toMatchObject({ status: 404, body: { message: 'Not Found' } });
    expect(await api(github, 'GET', '/repos/alice/notes/pulls')).toMatchObject({ status: 401, body: { message: 'Bad credentials' } });
    expect(await api(github, 'GET', '/repos/alice/notes', 'github_pat_nobody')).toMatchObject({ status: 401, body: { message: 'Bad credentials' } });
  });

  it("GET /user: the token's user (its first owner; docent-bot for the one token), 401 otherwise", async () => {
    const alice = await api(github, 'GET', '/user', ALICE);
    expect(alice).toEqual({ status: 200, body: { login: 'Alice', id: expect.any(Number), type: 'User' } });
    expect((await api(github, 'GET', '/user', BOB)).body).toEqual({ login: 'bob', id: expect.any(Number), type: 'User' });
    expect((await api(github, 'GET', '/user', BOB)).body.id).not.toBe(alice.body.id);
    expect((await api(github, 'GET', '/user', LEGACY)).body).toEqual({ login: 'docent-bot', id: expect.any(Number), type: 'User' });
    expect(await api(github, 'GET', '/user', 'github_pat_nobody')).toMatchObject({ status: 401, body: { message: 'Bad credentials' } });
    expect(await api(github, 'GET', '/user')).toMatchObject({ status: 401, body: { message: 'Requires authentication' } });
  });

  it('calls name the credential, never the token, and still compare as before', async () => {
    const since = github.calls.length;
    await api(github, 'GET', '/repos/alice/notes/pulls', ALICE);
    await api(github, 'GET', '/repos/bob/tools/pulls', BOB);
    await api(github, 'GET', '/repos/bob/tools/pulls', LEGACY);
    await api(github, 'GET', '/user', ALICE);
    const calls = github.calls.slice(since);
    expect(calls.map((c) => c.credentialId)).toEqual(['pat:Alice', 'pat:bob,bob-org', 'pat:*', 'pat:Alice']);
    expect(calls[0]).toMatchObject({ credentialId: 'pat:Alice' });
    // Existing exact comparisons of calls (test/e2e/github-app.test.ts) see only method, path, credential and scope.
    expect(calls[0]).toEqual({ method: 'GET', path: '/repos/alice/notes/pulls', credential: 'token' });
    const everything = JSON.stringify(github.calls.map((c) => ({ ...c, credentialId: c.credentialId })));
    for (const t of [ALICE, BOB, LEGACY]) expect(everything).not.toContain(t);
  });

  it('git: a personal token reaches its owners’ repositories, pushing when it may write', async () => {
    const refs = async (repo: string, token: string, service: 'git-upload-pack' | 'git-receive-pack') => {
      const res = await fetch(`${git.url}/${repo}.git/info/refs?service=${service}`, { headers: { authorization: 'Basic ' + Buffer.from(`x-access-token:${token}`).toString('base64') } });
      await res.arrayBuffer();
      return res.status;
    };
    expect(await refs('alice/notes', ALICE, 'git-upload-pack')).toBe(200);
    expect(await refs('alice/notes', ALICE, 'git-receive-pack')).toBe(200);
    expect(await refs('bob/tools', ALICE, 'git-upload-pack')).toBe(401);
    expect(await refs('bob/tools', BOB, 'git-upload-pack')).toBe(200);
    expect(await refs('bob/tools', BOB, 'git-receive-pack')).toBe(401);
    expect(await refs('bob/tools', LEGACY, 'git-receive-pack')).toBe(200);
    expect(await refs('alice/notes', 'github_pat_nobody', 'git-upload-pack')).toBe(401);
    expect([github.gitAllows(ALICE, 'ALICE', 'notes', true), github.gitAllows(BOB, 'bob-org', 'site', false), github.gitAllows(BOB, 'alice', 'notes', false)]).toEqual([true, true, false]);
    // An App double without personal tokens lets git use none of them.
    expect([appGitHub.gitAllows(ALICE, 'alice', 'notes', false), appGitHub.gitAllows(LEGACY, 'alice', 'notes', false)]).toEqual([false, false]);
  });
});

/** A JWT for the App, as docent signs it: RS256, `iss` the App id, ten minutes at most. */
function appJwt(): string {
  const now = Math.floor(Date.now() / 1000);
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const unsigned = `${part({ alg: 'RS256', typ: 'JWT' })}.${part({ iat: now - 30, exp: now + 540, iss: app.id })}`;
  return `${unsigned}.${createSign('RSA-SHA256').update(unsigned).sign(app.privateKeyPem).toString('base64url')}`;
}

describe('the App, installed per owner', () => {
  it('each owner has its own installation, found by id with the JWT', async () => {
    expect(appGitHub.installationOf('alice')).toBeUndefined();
    appGitHub.install('alice', 'notes');
    appGitHub.install('Bob', 'tools');
    const alice = appGitHub.installationOf('alice')!;
    const bob = appGitHub.installationOf('bob')!;
    expect([typeof alice, typeof bob]).toEqual(['number', 'number']);
    expect(alice).not.toBe(bob);
    appGitHub.install('bob', 'site');
    expect(appGitHub.installationOf('BOB')).toBe(bob);

    expect(await api(appGitHub, 'GET', `/app/installations/${bob}`, appJwt())).toEqual({
      status: 200,
      body: {
        id: bob,
        account: { login: 'Bob' },
        app_id: Number(app.id),
        app_slug: app.slug,
        target_type: 'Organization',
        permissions: { metadata: 'read', contents: 'write', pull_requests: 'write', checks: 'write', issues: 'write' },
        repository_selection: 'selected',
      },
    });
    expect((await api(appGitHub, 'GET', `/app/installations/${alice}`, appJwt())).body).toMatchObject({ id: alice, account: { login: 'alice' } });
    expect((await api(appGitHub, 'GET', '/app/installations/1', appJwt())).status).toBe(404);
    expect((await api(appGitHub, 'GET', `/app/installations/${alice}`)).status).toBe(401);
    expect(appGitHub.calls).toContainEqual({ method: 'GET', path: `/app/installations/${alice}`, credential: 'jwt' });
  });

  it("an installation token sees its own repositories with its grants' permissions, and no user", async () => {
    const alice = appGitHub.installationOf('alice')!;
    const issued = await api(appGitHub, 'POST', `/app/installations/${alice}/access_tokens`, appJwt(), { repositories: ['notes'], permissions: { contents: 'read', metadata: 'read' } });
    expect(issued.status).toBe(201);
    const token = String(issued.body.token);
    expect((await api(appGitHub, 'GET', '/repos/alice/notes', token)).body).toMatchObject({ full_name: 'alice/notes', permissions: readPermissions });
    expect((await api(appGitHub, 'GET', '/repos/bob/tools', token)).status).toBe(404);
    expect(await api(appGitHub, 'GET', '/user', token)).toMatchObject({ status: 403, body: { message: 'Resource not accessible by integration' } });
    const writer = await api(appGitHub, 'POST', `/app/installations/${alice}/access_tokens`, appJwt(), { repositories: ['notes'], permissions: { contents: 'write' } });
    expect((await api(appGitHub, 'GET', '/repos/alice/notes', String(writer.body.token))).body).toMatchObject({ permissions: writePermissions });
    expect(appGitHub.calls.filter((c) => c.path === '/repos/alice/notes').map((c) => c.credentialId)).toEqual([`installation:${alice}`, `installation:${alice}`]);
    expect([appGitHub.gitAllows(token, 'alice', 'notes', false), appGitHub.gitAllows(token, 'alice', 'notes', true)]).toEqual([true, false]);
  });

  it('an uninstall drops the installation; installing again makes a new one', async () => {
    const before = appGitHub.installationOf('alice')!;
    appGitHub.uninstall('alice', 'notes');
    expect(appGitHub.installationOf('alice')).toBeUndefined();
    expect((await api(appGitHub, 'GET', `/app/installations/${before}`, appJwt())).status).toBe(404);
    appGitHub.install('alice', 'notes');
    expect(appGitHub.installationOf('alice')).not.toBe(before);
    expect(appGitHub.installationOf('bob')).toBeDefined();
  });
});
