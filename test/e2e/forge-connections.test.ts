import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { Code, ConnectError, createDocentClient, type Forge } from '../../src/client';
import { SecretBox } from '../../src/crypto/secret-box';
import { ForgeStore } from '../../src/forges/forge-store';
import { runDocent, runDocentIn } from '../support/cli';
import { startGateway, type RunningGateway } from '../support/gateway';
import { createTestApp, jwtProblem } from '../support/github-app-double';

// An organization's forge connections through the operator API (REST, Connect and the CLI) over the real gateway,
// each one tested against a local stand-in for GitHub: `GET /user` for a token, `GET /app/installations/{id}` signed
// with the deployment's App for an installation.

const app = createTestApp();
const goodToken = `ghp_${randomBytes(18).toString('hex')}`;
const cliToken = `ghp_${randomBytes(18).toString('hex')}`;
const badToken = `ghp_${randomBytes(18).toString('hex')}`;
const installations = new Set([4242, 4343, 4444]);
const publicUrl = 'https://docent.example.test';

/** What the double was asked: the path and the authorization header, as GitHub would see them. */
const asked: Array<{ method: string; path: string; authorization?: string; jwtProblem?: string | null }> = [];
let github: Server;
let githubUrl: string;

let gw: RunningGateway;
/** The gateway's log lines, at debug level. */
const gatewayLog: string[] = [];
let operator: string;
let acmeOperator: string;
let globexOperator: string;
let projectAdmin: string;

type Body = Record<string, unknown>;
const call = async (key: string | undefined, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { ...(key && { authorization: `Bearer ${key}` }), ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Body };
};
const enterprise = () => ({ apiUrl: `${githubUrl}/api/v3`, gitUrl: githubUrl });
const listOf = async (key: string, org: string) => (await call(key, 'GET', `/v2/admin/orgs/${org}/forges`)).body.forges as Body[];

/** GitHub's two answers the connection check reads; a GitHub Enterprise server serves them under /api/v3. */
function startGitHubDouble(): Promise<void> {
  github = createServer((req, res) => {
    const path = (req.url ?? '').replace(/^\/api\/v3/, '');
    const authorization = req.headers.authorization;
    const answer = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const installation = /^\/app\/installations\/(\d+)$/.exec(path);
    if (req.method === 'GET' && path === '/user') {
      asked.push({ method: req.method, path, authorization });
      const token = authorization?.replace(/^(token|bearer) /i, '');
      return token === goodToken || token === cliToken ? answer(200, { login: 'octocat', id: 1 }) : answer(401, { message: 'Bad credentials' });
    }
    if (req.method === 'GET' && installation) {
      const problem = authorization?.startsWith('bearer ') || authorization?.startsWith('Bearer ') ? jwtProblem(authorization.slice(7), app) : 'no JWT';
      asked.push({ method: req.method, path, authorization, jwtProblem: problem });
      if (problem) return answer(401, { message: problem });
      const id = Number(installation[1]);
      return installations.has(id) ? answer(200, { id, account: { login: `org-${id}` }, app_id: Number(app.id) }) : answer(404, { message: 'Not Found' });
    }
    answer(404, { message: 'Not Found' });
  });
  return new Promise((resolve) =>
    github.listen(0, '127.0.0.1', () => {
      githubUrl = `http://127.0.0.1:${(github.address() as AddressInfo).port}`;
      resolve();
    }),
  );
}

beforeAll(async () => {
  await startGitHubDouble();
  const logs = new PassThrough();
  logs.on('data', (chunk: Buffer) => gatewayLog.push(chunk.toString('utf8')));
  gw = await startGateway(
    {
      DOCENT_SECRET_KEY: randomBytes(32).toString('base64'),
      DOCENT_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8',
      DOCENT_PUBLIC_URL: publicUrl,
      DOCENT_GITHUB_API_URL: githubUrl,
      DOCENT_GITHUB_GIT_URL: githubUrl,
      DOCENT_GITHUB_APP_ID: app.id,
      DOCENT_GITHUB_APP_PRIVATE_KEY: app.privateKeyPem,
      DOCENT_LOG_LEVEL: 'debug',
    },
    { logDestination: logs },
  );
  for (const org of ['acme', 'globex']) await gw.deps.tenancy.createOrg(org);
  await gw.deps.tenancy.createProject({ _id: 'acme-web', orgId: 'acme', repository: 'acme/web', ref: 'main' });
  operator = (await gw.deps.keys.create({ kind: 'operator', orgId: '*' })).key;
  acmeOperator = (await gw.deps.keys.create({ kind: 'operator', orgId: 'acme' })).key;
  globexOperator = (await gw.deps.keys.create({ kind: 'operator', orgId: 'globex' })).key;
  projectAdmin = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'acme-web' })).key;
});
afterAll(async () => {
  await gw.stop();
  await new Promise((resolve) => github.close(resolve));
});

describe('forge connections', () => {
  let tokenForge: Body;

  it('adds a token connection once GitHub accepts the token: 201 with its webhook secret, shown once and never listed', async () => {
    const added = await call(acmeOperator, 'POST', '/v2/admin/orgs/acme/forges', { kind: 'github', ...enterprise(), token: goodToken });
    expect(added).toEqual({
      status: 201,
      body: {
        id: expect.stringMatching(/^forge_[0-9a-f]{16}$/),
        kind: 'github',
        orgId: 'acme',
        ...enterprise(),
        credential: 'token',
        webhookUrl: `${publicUrl}/forges/${added.body.id}/webhook`,
        createdAt: expect.any(String),
        webhookSecret: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
      },
    });
    tokenForge = added.body;
    // Tested against the forge: GET /user with the token, at the Enterprise server's API.
    expect(asked).toContainEqual({ method: 'GET', path: '/user', authorization: `token ${goodToken}` });
    const { webhookSecret, ...view } = added.body;
    const listed = await call(acmeOperator, 'GET', '/v2/admin/orgs/acme/forges');
    expect(listed).toEqual({ status: 200, body: { forges: [view] } });
    for (const secret of [goodToken, webhookSecret as string]) expect(JSON.stringify(listed.body)).not.toContain(secret);
    // Sealed at rest: the database holds neither the token nor the secret.
    const stored = await gw.deps.mongo.db.collection('forge_connections').findOne({ _id: added.body.id as never });
    expect(stored).toMatchObject({ orgId: 'acme', credential: { type: 'token' } });
    for (const secret of [goodToken, webhookSecret as string]) expect(JSON.stringify(stored)).not.toContain(secret);
  });

  it('refuses a token GitHub refuses (400, without the token), and bodies that name no or both credentials or plain-http URLs', async () => {
    const refused = await call(acmeOperator, 'POST', '/v2/admin/orgs/acme/forges', { kind: 'github', ...enterprise(), token: badToken });
    expect(refused).toMatchObject({ status: 400, body: { code: 'invalid_argument', error: expect.stringContaining('GitHub refused the token (HTTP 401)') } });
    expect(JSON.stringify(refused.body)).not.toContain(badToken);
    const spaced = `${badToken} and more`;
    const malformed = await call(acmeOperator, 'POST', '/v2/admin/orgs/acme/forges', { kind: 'github', ...enterprise(), token: spaced });
    expect(malformed).toMatchObject({ status: 400, body: { code: 'invalid_argument', error: expect.stringContaining('token') } });
    expect(JSON.stringify(malformed.body)).not.toContain(badToken);
    const both = await call(acmeOperator, 'POST', '/v2/admin/orgs/acme/forges', { kind: 'github', token: goodToken, appInstallationId: 4444 });
    expect(both).toMatchObject({ status: 400, body: { error: expect.stringContaining('either token') } });
    expect(await call(acmeOperator, 'POST', '/v2/admin/orgs/acme/forges', { kind: 'github' })).toMatchObject({ status: 400 });
    expect(await call(acmeOperator, 'POST', '/v2/admin/orgs/acme/forges', { kind: 'gitlab', token: goodToken })).toMatchObject({ status: 400 });
    expect(await call(acmeOperator, 'POST', '/v2/admin/orgs/acme/forges', { kind: 'github', apiUrl: `${githubUrl}/api/v3`, token: goodToken })).toMatchObject({
      status: 400,
      body: { error: expect.stringContaining('both apiUrl and gitUrl') },
    });
    const http = await call(acmeOperator, 'POST', '/v2/admin/orgs/acme/forges', { kind: 'github', apiUrl: 'http://8.8.8.8/api/v3', gitUrl: 'http://8.8.8.8', token: goodToken });
    expect(http).toMatchObject({ status: 400, body: { code: 'invalid_argument', error: expect.stringContaining('use https') } });
    expect(await listOf(acmeOperator, 'acme')).toHaveLength(1);
    // The audit log has each call with the organization, never a token.
    const audit = (await call(operator, 'GET', '/v2/admin/audit?limit=200')).body;
    for (const token of [goodToken, badToken]) expect(JSON.stringify(audit)).not.toContain(token);
    expect(audit.entries).toContainEqual(expect.objectContaining({ method: 'POST', route: '/v2/admin/orgs/{org}/forges', targets: { org: 'acme', kind: 'github' }, status: 400 }));
    expect(audit.entries).toContainEqual(expect.objectContaining({ method: 'POST', route: '/v2/admin/orgs/{org}/forges', targets: { org: 'acme', kind: 'github' }, status: 201 }));
  });

  it("only the organization's operator keys, or the deployment's, manage its connections", async () => {
    const id = tokenForge.id as string;
    expect(await call(globexOperator, 'GET', '/v2/admin/orgs/acme/forges')).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await call(globexOperator, 'POST', '/v2/admin/orgs/acme/forges', { kind: 'github', ...enterprise(), token: goodToken })).toMatchObject({ status: 404 });
    expect(await call(globexOperator, 'DELETE', `/v2/admin/orgs/acme/forges/${id}`)).toMatchObject({ status: 404 });
    // Through its own organization's path another organization's connection is as absent as one that never was.
    const theirs = await call(globexOperator, 'DELETE', `/v2/admin/orgs/globex/forges/${id}`);
    const none = await call(globexOperator, 'DELETE', '/v2/admin/orgs/globex/forges/forge_0000000000000000');
    expect(theirs).toEqual({ status: 404, body: { code: 'not_found', error: `organization globex has no forge connection ${id}` } });
    expect(none).toEqual({ status: 404, body: { code: 'not_found', error: 'organization globex has no forge connection forge_0000000000000000' } });
    expect(await call(globexOperator, 'POST', `/v2/admin/orgs/globex/forges/${id}/webhook-secret`)).toMatchObject({ status: 404 });
    expect(await listOf(globexOperator, 'globex')).toEqual([]);
    expect(await call(projectAdmin, 'GET', '/v2/admin/orgs/acme/forges')).toMatchObject({ status: 403, body: { code: 'permission_denied' } });
    expect(await call(projectAdmin, 'POST', '/v2/admin/orgs/acme/forges', { kind: 'github', token: goodToken })).toMatchObject({ status: 403 });
    expect(await call(undefined, 'GET', '/v2/admin/orgs/acme/forges')).toMatchObject({ status: 401 });
    expect((await listOf(operator, 'acme')).map((f) => f.id)).toEqual([id]);
    expect(await call(operator, 'GET', '/v2/admin/orgs/no-such-org/forges')).toMatchObject({ status: 404 });
  });

  it("adds an installation of the deployment's GitHub App, once, by the deployment's operator: a second claim, for another organization too, is 409", async () => {
    // An organization's own key cannot claim one: installation ids are numbers, another account's is easily guessed.
    expect(await call(acmeOperator, 'POST', '/v2/admin/orgs/acme/forges', { kind: 'github', appInstallationId: 4242 })).toMatchObject({
      status: 403,
      body: { code: 'permission_denied', error: expect.stringContaining('operator key for all organizations') },
    });
    const added = await call(operator, 'POST', '/v2/admin/orgs/acme/forges', { kind: 'github', appInstallationId: 4242 });
    expect(added).toMatchObject({ status: 201, body: { orgId: 'acme', credential: 'app', installationId: 4242, apiUrl: githubUrl, gitUrl: githubUrl, webhookSecret: expect.any(String) } });
    expect(asked.filter((a) => a.path === '/app/installations/4242')).toEqual([expect.objectContaining({ jwtProblem: null })]);
    expect(await call(operator, 'POST', '/v2/admin/orgs/globex/forges', { kind: 'github', appInstallationId: 4242 })).toMatchObject({
      status: 409,
      body: { code: 'already_exists', error: expect.stringContaining('4242') },
    });
    expect(await call(operator, 'POST', '/v2/admin/orgs/acme/forges', { kind: 'github', appInstallationId: 4242 })).toMatchObject({ status: 409 });
    expect(await call(operator, 'POST', '/v2/admin/orgs/globex/forges', { kind: 'github', appInstallationId: 9999 })).toMatchObject({
      status: 400,
      body: { code: 'invalid_argument', error: expect.stringContaining('installation 9999') },
    });
    expect(
      await call(operator, 'POST', '/v2/admin/orgs/globex/forges', { kind: 'github', apiUrl: 'https://ghe.example.test/api/v3', gitUrl: 'https://ghe.example.test', appInstallationId: 4444 }),
    ).toMatchObject({
      status: 400,
      body: { error: expect.stringContaining("the deployment's GitHub App is on") },
    });
    expect((await listOf(acmeOperator, 'acme')).map((f) => f.credential)).toEqual(['token', 'app']);
    expect(await listOf(globexOperator, 'globex')).toEqual([]);
  });

  it('rotating gives a new secret that replaces the old one; a removed connection is gone', async () => {
    const id = tokenForge.id as string;
    const rotated = await call(acmeOperator, 'POST', `/v2/admin/orgs/acme/forges/${id}/webhook-secret`);
    expect(rotated).toEqual({ status: 200, body: { id, webhookUrl: tokenForge.webhookUrl, webhookSecret: expect.any(String) } });
    expect(rotated.body.webhookSecret).not.toBe(tokenForge.webhookSecret);
    const store = new ForgeStore(gw.deps.mongo.db, new SecretBox(gw.deps.config.secretKey!));
    expect((await store.get(id))?.webhookSecret).toBe(rotated.body.webhookSecret);
    expect(JSON.stringify(await listOf(acmeOperator, 'acme'))).not.toContain(rotated.body.webhookSecret as string);
    expect(await call(acmeOperator, 'DELETE', `/v2/admin/orgs/acme/forges/${id}`)).toEqual({ status: 200, body: { id, deleted: true } });
    expect((await listOf(acmeOperator, 'acme')).map((f) => f.id)).not.toContain(id);
    expect(await store.get(id)).toBeNull();
    expect(await call(acmeOperator, 'DELETE', `/v2/admin/orgs/acme/forges/${id}`)).toMatchObject({ status: 404 });
    expect(await call(acmeOperator, 'POST', `/v2/admin/orgs/acme/forges/${id}/webhook-secret`)).toMatchObject({ status: 404 });
  });

  it('the CLI reads the token from standard input, and --json prints what REST answers', async () => {
    const env = { DOCENT_API_URL: gw.url, DOCENT_OPERATOR_KEY: acmeOperator };
    const docent = (args: string[], stdin = '') => runDocentIn(args, env, stdin);
    const [apiUrl, gitUrl] = [`${githubUrl}/api/v3`, githubUrl];
    const added = await docent(['forge', 'add', '--org', 'acme', '--kind', 'github', '--api-url', apiUrl, '--git-url', gitUrl, '--token-stdin', '--json'], `${cliToken}\n`);
    expect(added).toMatchObject({ code: 0, stderr: '' });
    const made = JSON.parse(added.stdout) as Body;
    const rest = (await call(acmeOperator, 'POST', '/v2/admin/orgs/acme/forges', { kind: 'github', ...enterprise(), token: goodToken })).body;
    expect(Object.keys(made).sort()).toEqual(Object.keys(rest).sort());
    expect(made).toMatchObject({ orgId: 'acme', apiUrl, gitUrl, credential: 'token', webhookUrl: `${publicUrl}/forges/${made.id}/webhook` });
    expect(asked).toContainEqual({ method: 'GET', path: '/user', authorization: `token ${cliToken}` });
    const listed = await docent(['forge', 'list', '--org', 'acme', '--json']);
    expect(JSON.parse(listed.stdout)).toEqual((await call(acmeOperator, 'GET', '/v2/admin/orgs/acme/forges')).body);
    // Without an operator key the CLI reads the database, and prints the same.
    const direct = await runDocent(['forge', 'list', '--org', 'acme', '--json'], {
      DOCENT_MONGO_DB: gw.deps.config.mongo.db,
      DOCENT_SECRET_KEY: gw.deps.config.secretKey!.toString('base64'),
      DOCENT_PUBLIC_URL: publicUrl,
    });
    expect(JSON.parse(direct.stdout)).toEqual(JSON.parse(listed.stdout));

    // In text mode the secret is stdout's only line; what to do with it goes to stderr.
    const installation = await runDocentIn(['forge', 'add', '--org', 'acme', '--kind', 'github', '--app-installation', '4343'], { ...env, DOCENT_OPERATOR_KEY: operator });
    expect(installation).toMatchObject({ code: 0, stdout: expect.stringMatching(/^[A-Za-z0-9_-]{32}\n$/), stderr: expect.stringContaining('installation 4343') });
    expect((await docent(['forge', 'list', '--org', 'acme'])).stdout).toContain(`${made.id}  github  token  ${apiUrl}  ${gitUrl}  ${made.webhookUrl}`);
    const rotated = await docent(['forge', 'rotate-secret', '--org', 'acme', String(made.id), '--json']);
    expect(JSON.parse(rotated.stdout)).toEqual({ id: made.id, webhookUrl: made.webhookUrl, webhookSecret: expect.any(String) });
    expect(JSON.parse(rotated.stdout).webhookSecret).not.toBe(made.webhookSecret);
    expect(await docent(['forge', 'remove', '--org', 'acme', String(made.id)])).toMatchObject({ code: 0, stdout: expect.stringContaining(`removed forge connection ${made.id}`) });
    expect((await listOf(acmeOperator, 'acme')).map((f) => f.id)).not.toContain(made.id);

    const refused = await docent(['forge', 'add', '--org', 'acme', '--kind', 'github', '--api-url', apiUrl, '--git-url', gitUrl, '--token-stdin'], badToken);
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringContaining('GitHub refused the token (HTTP 401)') });
    expect(refused.stdout + refused.stderr).not.toContain(badToken);
    expect(await docent(['forge', 'add', '--org', 'acme', '--kind', 'github'])).toMatchObject({ code: 2, stderr: expect.stringContaining('--token-stdin') });
    expect(await docent(['forge', 'remove', '--org', 'globex', String(rest.id)])).toMatchObject({ code: 1, stderr: expect.stringContaining('not found') });
    expect(await docent(['forge', 'remove', '--org', 'acme', 'forge_0000000000000000'])).toMatchObject({ code: 1, stderr: expect.stringContaining('has no forge connection') });
  });

  it('the Connect RPCs answer as REST does, with the same refusals', async () => {
    const admin = createDocentClient({ baseUrl: gw.url, apiKey: acmeOperator }).admin;
    const refusal = async (pending: Promise<unknown>) => {
      const err = await pending.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConnectError);
      return err as ConnectError;
    };
    const asRest = (f: Forge) => ({
      id: f.id,
      kind: f.kind,
      orgId: f.orgId,
      apiUrl: f.apiUrl,
      gitUrl: f.gitUrl,
      credential: f.credential,
      ...(f.installationId !== undefined && { installationId: Number(f.installationId) }),
      webhookUrl: f.webhookUrl,
      createdAt: new Date(Number(f.createdAt!.seconds) * 1000 + Math.floor(f.createdAt!.nanos / 1e6)).toISOString(),
    });
    const made = await admin.addForge({ orgId: 'acme', kind: 'github', ...enterprise(), token: goodToken });
    expect(made.webhookSecret).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(made.forge).toMatchObject({ orgId: 'acme', credential: 'token', webhookUrl: `${publicUrl}/forges/${made.forge!.id}/webhook` });
    expect((await admin.listForges({ orgId: 'acme' })).forges.map(asRest)).toEqual(await listOf(acmeOperator, 'acme'));
    const rotated = await admin.rotateForgeWebhookSecret({ orgId: 'acme', forgeId: made.forge!.id });
    expect(rotated).toMatchObject({ id: made.forge!.id, webhookUrl: made.forge!.webhookUrl });
    expect(rotated.webhookSecret).not.toBe(made.webhookSecret);
    await admin.removeForge({ orgId: 'acme', forgeId: made.forge!.id });
    expect((await admin.listForges({ orgId: 'acme' })).forges.map((f) => f.id)).not.toContain(made.forge!.id);

    const bad = await refusal(admin.addForge({ orgId: 'acme', kind: 'github', ...enterprise(), token: badToken }));
    expect(bad.code).toBe(Code.InvalidArgument);
    expect(bad.rawMessage).toContain('GitHub refused the token (HTTP 401)');
    expect(bad.rawMessage).not.toContain(badToken);
    expect((await refusal(admin.addForge({ orgId: 'acme', kind: 'github', appInstallationId: 4242n }))).code).toBe(Code.PermissionDenied);
    expect((await refusal(admin.removeForge({ orgId: 'globex', forgeId: made.forge!.id }))).code).toBe(Code.NotFound);
    expect((await refusal(admin.removeForge({ orgId: 'acme', forgeId: made.forge!.id }))).code).toBe(Code.NotFound);
    const projectKey = createDocentClient({ baseUrl: gw.url, apiKey: projectAdmin }).admin;
    expect((await refusal(projectKey.listForges({ orgId: 'acme' }))).code).toBe(Code.PermissionDenied);
    const entries = (await createDocentClient({ baseUrl: gw.url, apiKey: operator }).admin.listAuditEntries({ limit: 200 })).entries;
    expect(entries.find((e) => e.route === '/admin.v1.AdminService/RemoveForge' && e.status === 200)).toMatchObject({ targets: { orgId: 'acme', forgeId: made.forge!.id } });
    expect(JSON.stringify(entries.map((e) => e.targets))).not.toContain(goodToken);
  });

  it("no token reached the gateway's log", () => {
    const log = gatewayLog.join('');
    expect(log).toContain('"route":"/v2/admin/orgs/{org}/forges"');
    for (const token of [goodToken, cliToken, badToken]) expect(log).not.toContain(token.slice(4));
  });
});
