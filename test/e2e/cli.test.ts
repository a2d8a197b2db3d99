import { randomBytes } from 'node:crypto';
import { TenancyStore } from '../../src/tenancy/store';
import { runDocent } from '../support/cli';
import { startGateway, type RunningGateway } from '../support/gateway';

let gw: RunningGateway;
const secretKey = randomBytes(32).toString('base64');
let extraEnv: Record<string, string> = {};

/** The compiled `docent` command, run as its own process the way an operator runs it, on the gateway's database. */
const docent = (...args: string[]) => runDocent(args, { DOCENT_MONGO_DB: gw.deps.config.mongo.db, DOCENT_SECRET_KEY: secretKey, ...extraEnv });

beforeAll(async () => {
  gw = await startGateway(); // the CLI writes to the gateway's database, so its effects are seen through the API
});
afterAll(() => gw.stop());

const getJob = (key: string) => fetch(`${gw.url}/v2/agent/docs/job/job_none`, { headers: { authorization: `Bearer ${key}` } });

/** The status of `getJob(key)` once it is `wanted`, or the last one after `withinMs`: the gateway reuses a key it read for up to DOCENT_LOOKUP_CACHE_MS (1 s). */
async function statusWithin(withinMs: number, key: string, wanted: number): Promise<number> {
  const deadline = performance.now() + withinMs;
  for (;;) {
    const status = (await getJob(key)).status;
    if (status === wanted || performance.now() > deadline) return status;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** What the CLI stored, read as the CLI reads it: past the gateway's lookup cache. */
const storedProjects = () => new TenancyStore(gw.deps.mongo.db);

describe('docent CLI', () => {
  it('creates an organization once', async () => {
    expect(await docent('org', 'create', 'acme')).toEqual({ code: 0, stdout: 'created organization acme\n', stderr: '' });
    const again = await docent('org', 'create', 'acme');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('organization acme already exists');
  });

  it('creates a project with its repository, domain and allowed origins', async () => {
    const r = await docent(
      'project',
      'create',
      'docs',
      '--org',
      'acme',
      '--repo',
      'acme/docs',
      '--ref',
      'main',
      '--domain',
      'docs.acme.dev',
      '--origin',
      'https://acme.dev',
      '--origin',
      'http://localhost:3000',
      '--json',
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      id: 'docs',
      orgId: 'acme',
      repository: 'acme/docs',
      ref: 'main',
      domain: 'docs.acme.dev',
      allowedOrigins: ['https://acme.dev', 'http://localhost:3000'],
    });
    expect(await gw.deps.tenancy.getProjectByDomain('docs.acme.dev')).toMatchObject({ _id: 'docs', allowedOrigins: ['https://acme.dev', 'http://localhost:3000'] });
  });

  it('refuses bad projects with exit code 1 and bad usage with exit code 2', async () => {
    const base = ['project', 'create', 'p2', '--org', 'acme', '--repo', 'https://git.example/acme/p2.git', '--ref', 'main'];
    const cases: Array<[string[], number, RegExp]> = [
      [[...base, '--domain', 'docs.acme.dev'], 1, /already exists/],
      [[...base, '--domain', 'p2.acme.dev', '--origin', 'https://acme.dev/path'], 1, /allowed origin/],
      [['project', 'create', 'p3', '--org', 'nobody', '--repo', 'a/b', '--ref', 'main', '--domain', 'p3.acme.dev'], 1, /organization nobody not found/],
      [base, 2, /--domain is required/],
      [[...base, '--domain', 'p2.acme.dev', '--colour', 'red'], 2, /colour/],
      [['key', 'create', '--project', 'docs', '--kind', 'root'], 2, /--kind must be admin or assistant/],
      [['frobnicate'], 2, /unknown command: frobnicate/],
    ];
    for (const [args, code, message] of cases) {
      const r = await docent(...args);
      expect({ args, code: r.code }).toEqual({ args, code });
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
    }
    expect(await gw.deps.tenancy.getProject('p2')).toBeNull();
  });

  it('creates keys that work, lists them without secrets, and revokes them', async () => {
    const admin = await docent('key', 'create', '--project', 'docs', '--kind', 'admin');
    expect(admin.code).toBe(0);
    const adminKey = admin.stdout.trim();
    expect(adminKey).toMatch(/^docent_admin_[A-Za-z0-9_-]{43}$/);
    expect(admin.stderr).toContain('shown only once');
    expect((await getJob(adminKey)).status).toBe(404); // authenticated for its project; the job does not exist

    const asst = JSON.parse((await docent('key', 'create', '--project', 'docs', '--kind', 'assistant', '--json')).stdout);
    expect(asst).toMatchObject({ kind: 'assistant', orgId: 'acme', projectId: 'docs', domain: 'docs.acme.dev', key: expect.stringMatching(/^docent_asst_/) });
    await expect(gw.deps.keys.authenticate(`Bearer ${asst.key}`, 'assistant')).resolves.toMatchObject({ domain: 'docs.acme.dev', orgId: 'acme' });
    expect((await getJob(asst.key)).status).toBe(403);

    const listed = await docent('key', 'list', '--project', 'docs');
    const listedJson = await docent('key', 'list', '--project', 'docs', '--json');
    const hashes = (await gw.deps.mongo.db.collection('api_keys').find().toArray()).map((d) => d.hash as string);
    expect(hashes).toHaveLength(2);
    for (const out of [listed.stdout, listedJson.stdout]) {
      for (const secret of [adminKey, asst.key, ...hashes]) expect(out).not.toContain(secret);
      expect(out).toContain(asst.id);
    }
    expect(
      JSON.parse(listedJson.stdout)
        .map((k: { kind: string; status: string }) => [k.kind, k.status])
        .sort(),
    ).toEqual([
      ['admin', 'active'],
      ['assistant', 'active'],
    ]);

    const adminId = JSON.parse(listedJson.stdout).find((k: { kind: string }) => k.kind === 'admin').id as string;
    expect(await docent('key', 'revoke', adminId)).toMatchObject({ code: 0, stdout: `revoked key ${adminId}\n` });
    // Revoked by another process: the running gateway refuses the key within its 1 s lookup bound.
    expect(await statusWithin(1_500, adminKey, 401)).toBe(401);
    expect((await docent('key', 'revoke', adminId)).code).toBe(1);
    expect((await docent('key', 'list', '--project', 'docs')).stdout).toMatch(new RegExp(`${adminId}\\s+admin\\s+revoked`));
  });

  it('creates assistant keys allowed groups of restricted pages, and refuses groups where they make no sense', async () => {
    const created = JSON.parse((await docent('key', 'create', '--project', 'docs', '--kind', 'assistant', '--groups', 'staff,beta', '--groups', 'ops', '--json')).stdout);
    expect(created).toMatchObject({ kind: 'assistant', domain: 'docs.acme.dev', groups: ['staff', 'beta', 'ops'] });
    await expect(gw.deps.keys.authenticate(`Bearer ${created.key}`, 'assistant')).resolves.toMatchObject({ groups: ['staff', 'beta', 'ops'] });
    const text = await docent('key', 'create', '--project', 'docs', '--kind', 'assistant', '--groups', 'staff');
    expect(text.stderr).toContain('it also sees pages for staff');
    const listed = await docent('key', 'list', '--project', 'docs');
    expect(listed.stdout.split('\n')[0]).toContain('GROUPS');
    expect(listed.stdout).toMatch(new RegExp(`${created.id}\\s+assistant\\s+active.*staff,beta,ops`));
    expect(await docent('key', 'create', '--project', 'docs', '--kind', 'admin', '--groups', 'staff')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--groups applies to assistant keys only'),
    });
    expect(await docent('key', 'create', '--project', 'docs', '--kind', 'assistant', '--groups', 'staff,,beta')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('comma-separated group names'),
    });
    expect(await docent('key', 'create', '--project', 'docs', '--kind', 'assistant', '--groups', 'x'.repeat(101))).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('must be 1-100 characters'),
    });
  });

  it("sets, replaces and clears a project's sandboxed setup and check commands", async () => {
    const set = await docent('project', 'update', 'docs', '--setup', 'npm ci', '--check', 'npm test', '--check', 'npm run lint', '--network', 'on');
    expect(set).toMatchObject({ code: 0, stdout: 'updated project docs: setup: "npm ci"; checks: "npm test", "npm run lint"; network: on\n' });
    expect(await storedProjects().getProject('docs')).toMatchObject({ setupCommands: ['npm ci'], checkCommands: ['npm test', 'npm run lint'], sandboxNetwork: true });
    const replaced = JSON.parse((await docent('project', 'update', 'docs', '--check', 'make check', '--json')).stdout);
    expect(replaced).toEqual({
      id: 'docs',
      setupCommands: ['npm ci'],
      checkCommands: ['make check'],
      sandboxNetwork: true,
      sandboxAllowHosts: [],
      allowedOrigins: ['https://acme.dev', 'http://localhost:3000'],
    });
    const cleared = JSON.parse((await docent('project', 'update', 'docs', '--clear-checks', '--network', 'off', '--json')).stdout);
    expect(cleared).toEqual({ id: 'docs', setupCommands: [], checkCommands: [], sandboxNetwork: false, sandboxAllowHosts: [], allowedOrigins: ['https://acme.dev', 'http://localhost:3000'] });
    expect(await docent('project', 'update', 'docs')).toMatchObject({ code: 2, stderr: expect.stringContaining('needs --setup, --check, --clear-checks, --network or --allow-host') });
    expect(await docent('project', 'update', 'docs', '--network', 'maybe')).toMatchObject({ code: 2, stderr: expect.stringContaining('--network must be on or off') });
    expect(await docent('project', 'update', 'docs', '--check', ' ')).toMatchObject({ code: 1, stderr: expect.stringContaining('each --check command must be') });
    expect(await docent('project', 'update', 'ghost', '--check', 'true')).toMatchObject({ code: 1, stderr: expect.stringContaining('project ghost not found') });
  });

  it("keys a project's setup cache on files, sets its maintenance commands, and clears the cache on every worker", async () => {
    const set = await docent('project', 'update', 'docs', '--setup', 'npm ci', '--cache-key', 'package-lock.json,requirements.txt', '--maintenance', 'npm run build');
    expect(set).toMatchObject({ code: 0, stdout: expect.stringContaining('setup cache keyed by: package-lock.json, requirements.txt; maintenance: "npm run build"') });
    expect(await storedProjects().getProject('docs')).toMatchObject({ setupCacheKeyFiles: ['package-lock.json', 'requirements.txt'], maintenanceCommands: ['npm run build'] });
    expect(await docent('project', 'update', 'docs', '--cache-key', '../secrets')).toMatchObject({ code: 1, stderr: expect.stringContaining('must be a file path inside the repository') });
    expect(await docent('project', 'update', 'docs', '--cache-key', '.git/config')).toMatchObject({ code: 1, stderr: expect.stringContaining('must be a file path inside the repository') });
    const first = JSON.parse((await docent('project', 'cache', 'clear', 'docs', '--json')).stdout);
    const second = JSON.parse((await docent('project', 'cache', 'clear', 'docs', '--json')).stdout);
    expect([first.setupCacheGeneration, second.setupCacheGeneration]).toEqual([1, 2]);
    expect(await docent('project', 'cache', 'clear', 'ghost')).toMatchObject({ code: 1, stderr: expect.stringContaining('project ghost not found') });
    const off = JSON.parse((await docent('project', 'update', 'docs', '--clear-cache-keys', '--clear-checks', '--json')).stdout);
    expect(off).not.toHaveProperty('setupCacheKeyFiles');
    expect(off).not.toHaveProperty('maintenanceCommands');
    expect((await storedProjects().getProject('docs'))?.setupCacheKeyFiles).toBeUndefined();
  });

  it("narrows a project's sandbox egress to listed hosts, and clears the list", async () => {
    const set = await docent('project', 'update', 'docs', '--network', 'on', '--allow-host', 'registry.npmjs.org,*.Example.org', '--allow-host', 'pypi.org');
    expect(set).toMatchObject({ code: 0, stdout: expect.stringContaining('network: on; allowed hosts: registry.npmjs.org, *.example.org, pypi.org\n') });
    expect(await storedProjects().getProject('docs')).toMatchObject({ sandboxNetwork: true, sandboxAllowHosts: ['registry.npmjs.org', '*.example.org', 'pypi.org'] });
    expect(await docent('project', 'update', 'docs', '--allow-host', 'http://evil.example/x')).toMatchObject({ code: 1, stderr: expect.stringContaining('is not a host name or *.domain pattern') });
    expect(await docent('project', 'update', 'docs', '--allow-host', '*')).toMatchObject({ code: 1, stderr: expect.stringContaining('is not a host name') });
    expect(await docent('project', 'update', 'docs', '--allow-host', 'a.example', '--clear-allow-hosts')).toMatchObject({ code: 2 });
    const cleared = JSON.parse((await docent('project', 'update', 'docs', '--clear-allow-hosts', '--network', 'off', '--json')).stdout);
    expect(cleared).toMatchObject({ sandboxNetwork: false, sandboxAllowHosts: [] });
    expect((await storedProjects().getProject('docs'))?.sandboxAllowHosts).toBeUndefined();
  });

  it("sets and removes a project's caps", async () => {
    const set = JSON.parse((await docent('project', 'update', 'docs', '--max-turn-tokens', '50000', '--max-job-cost-usd', '2.5', '--json')).stdout);
    expect(set.caps).toEqual({ maxTurnTokens: 50000, maxJobCostUsd: 2.5 });
    expect(await storedProjects().getProject('docs')).toMatchObject({ maxTurnTokens: 50000, maxJobCostUsd: 2.5 });
    const removed = JSON.parse((await docent('project', 'update', 'docs', '--max-turn-tokens', '0', '--max-job-cost-usd', '0', '--json')).stdout);
    expect(removed.caps).toBeUndefined();
    expect(await docent('project', 'update', 'docs', '--max-turn-minutes', 'lots')).toMatchObject({ code: 2, stderr: expect.stringContaining('--max-turn-minutes must be a number') });
  });

  it("sets a project's fairness weight; the default removes it, a weight out of bounds is refused", async () => {
    const set = await docent('project', 'update', 'docs', '--fairness-weight', '2.5');
    expect(set).toMatchObject({ code: 0, stdout: expect.stringContaining('fairness weight: 2.5') });
    expect(await storedProjects().getProject('docs')).toMatchObject({ fairnessWeight: 2.5 });
    expect(JSON.parse((await docent('project', 'update', 'docs', '--fairness-weight', '1', '--json')).stdout).fairnessWeight).toBeUndefined();
    expect((await storedProjects().getProject('docs'))?.fairnessWeight).toBeUndefined();
    expect(await docent('project', 'update', 'docs', '--fairness-weight', '1000')).toMatchObject({ code: 1, stderr: expect.stringContaining('fairnessWeight must be a number from 0.1 to 100') });
    expect(await docent('project', 'update', 'docs', '--fairness-weight', 'heavy')).toMatchObject({ code: 2, stderr: expect.stringContaining('--fairness-weight must be a number') });
  });

  it('creates, lists and deletes webhook endpoints; the secret is printed once and stored sealed', async () => {
    const created = await docent('webhook', 'create', '--project', 'docs', '--url', 'https://hooks.docent.invalid/in', '--events', 'agent_job.completed,agent_job.failed');
    expect(created.code).toBe(0);
    const secret = created.stdout.trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32}$/);
    expect(created.stderr).toContain('shown only once');
    const stored = await gw.deps.mongo.db.collection('webhook_endpoints').find().toArray();
    expect(stored).toHaveLength(1);
    expect(JSON.stringify(stored)).not.toContain(secret.slice(6));
    const listed = JSON.parse((await docent('webhook', 'list', '--project', 'docs', '--json')).stdout);
    expect(listed).toEqual([expect.objectContaining({ url: 'https://hooks.docent.invalid/in', events: ['agent_job.completed', 'agent_job.failed'] })]);
    expect(JSON.stringify(listed)).not.toContain(secret.slice(6));
    expect((await docent('webhook', 'delete', '--project', 'docs', listed[0].id)).stdout).toBe(`deleted webhook ${listed[0].id}\n`);
    expect(JSON.parse((await docent('webhook', 'list', '--project', 'docs', '--json')).stdout)).toEqual([]);
  });

  it('refuses webhook URLs on private networks, unknown events, and webhooks without DOCENT_SECRET_KEY', async () => {
    expect(await docent('webhook', 'create', '--project', 'docs', '--url', 'http://127.0.0.1:9/hook')).toMatchObject({ code: 1, stderr: expect.stringContaining('loopback address') });
    expect(await docent('webhook', 'create', '--project', 'docs', '--url', 'https://169.254.169.254/')).toMatchObject({ code: 1, stderr: expect.stringContaining('link-local address') });
    expect(await docent('webhook', 'create', '--project', 'docs', '--url', 'https://hooks.docent.invalid/in', '--events', 'job.done')).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('unknown event job.done'),
    });
    extraEnv = { DOCENT_SECRET_KEY: '' };
    try {
      expect(await docent('webhook', 'create', '--project', 'docs', '--url', 'https://hooks.docent.invalid/in')).toMatchObject({ code: 1, stderr: expect.stringContaining('DOCENT_SECRET_KEY') });
    } finally {
      extraEnv = {};
    }
    expect(await docent('webhook', 'list', '--project', 'ghost')).toMatchObject({ code: 1, stderr: expect.stringContaining('project ghost not found') });
  });

  it('refuses repositories the worker could not safely clone', async () => {
    const create = (repo: string) => docent('project', 'create', 'unsafe', '--org', 'acme', '--repo', repo, '--ref', 'main', '--domain', 'unsafe.acme.dev');
    expect(await create('file:///etc')).toMatchObject({ code: 1, stderr: expect.stringContaining('must be an https git URL or owner/name') });
    expect(await create('git@github.com:acme/x.git')).toMatchObject({ code: 1, stderr: expect.stringContaining('must be an https git URL or owner/name') });
    expect(await create('https://10.0.0.7/acme/x.git')).toMatchObject({ code: 1, stderr: expect.stringMatching(/private or reserved address.*DOCENT_ALLOW_PRIVATE_NETWORKS/) });
    expect(await create('https://127.0.0.1:9/acme/x.git')).toMatchObject({ code: 1, stderr: expect.stringContaining('loopback address') });
    expect(await gw.deps.tenancy.getProject('unsafe')).toBeNull();
  });

  it('says which project is missing when listing or creating keys', async () => {
    const r = await docent('key', 'list', '--project', 'ghost');
    expect(r).toMatchObject({ code: 1, stdout: '' });
    expect(r.stderr).toContain('project ghost not found');
  });
});
