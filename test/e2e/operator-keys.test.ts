import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runDocent } from '../support/cli';
import { startGateway, type RunningGateway } from '../support/gateway';

// `docent operator key create|revoke|ensure`: bootstrap commands against the gateway's own database.
let gw: RunningGateway;
const docent = (...args: string[]) => runDocent(args, { DOCENT_MONGO_DB: gw.deps.config.mongo.db });

beforeAll(async () => {
  gw = await startGateway();
  await gw.deps.tenancy.createOrg('acme');
});
afterAll(() => gw.stop());

describe('docent operator key', () => {
  it('makes an all-organizations key shown once and stored only as its hash', async () => {
    const r = await docent('operator', 'key', 'create');
    expect(r.code).toBe(0);
    const key = r.stdout.trim();
    expect(key).toMatch(/^docent_op_[A-Za-z0-9_-]{43}$/);
    expect(r.stderr).toMatch(/created operator key key_[0-9a-f]{16} for all organizations; it is shown only once/);
    expect(await gw.deps.keys.authenticateOperator(`Bearer ${key}`)).toEqual({ keyId: expect.stringMatching(/^key_/), kind: 'operator' });
    const stored = await gw.deps.mongo.db.collection('api_keys').find({ kind: 'operator' }).toArray();
    expect(JSON.stringify(stored)).not.toContain(key);
  });

  it('scopes a key to one existing organization and refuses an unknown one', async () => {
    const r = await docent('operator', 'key', 'create', '--org', 'acme', '--json');
    expect(r.code).toBe(0);
    const made = JSON.parse(r.stdout) as { id: string; key: string; orgId: string };
    expect(made.orgId).toBe('acme');
    expect(await gw.deps.keys.authenticateOperator(`Bearer ${made.key}`)).toEqual({ keyId: made.id, kind: 'operator', orgId: 'acme' });
    const unknown = await docent('operator', 'key', 'create', '--org', 'nobody');
    expect(unknown).toMatchObject({ code: 1, stdout: '' });
    expect(unknown.stderr).toContain('organization nobody not found');
  });

  it('a revoked operator key stops working', async () => {
    const made = JSON.parse((await docent('operator', 'key', 'create', '--json')).stdout) as { id: string; key: string };
    expect(await docent('operator', 'key', 'revoke', made.id)).toMatchObject({ code: 0, stdout: `revoked key ${made.id}\n` });
    await expect(gw.deps.keys.authenticateOperator(`Bearer ${made.key}`)).rejects.toThrow('invalid, revoked or expired API key');
  });

  it("is not a reader's key: the search API refuses it; on a project's agent routes it is the admin of the projects it covers", async () => {
    const key = (await docent('operator', 'key', 'create')).stdout.trim();
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const search = await fetch(`${gw.url}/discovery/v1/search/docs.acme.test`, { method: 'POST', headers, body: JSON.stringify({ query: 'install' }) });
    expect(search.status).toBe(403);
    // A project that does not exist is 404, as it is for an admin key; docs/operator-api.md says what the key may do there.
    const res = await fetch(`${gw.url}/v2/agent/nowhere/job/job_none`, { headers });
    expect(res.status).toBe(404);
  });

  it('ensure (what npm start runs) saves a key with mode 0600 and keeps it while it works', async () => {
    const keyFile = path.join(await mkdtemp(path.join(tmpdir(), 'docent-op-')), 'cache', 'operator-key');
    expect((await docent('operator', 'key', 'ensure', '--key-file', keyFile)).code).toBe(0);
    const first = (await readFile(keyFile, 'utf8')).trim();
    expect(first).toMatch(/^docent_op_/);
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    expect((await docent('operator', 'key', 'ensure', '--key-file', keyFile)).stdout).toContain('operator key kept in');
    expect((await readFile(keyFile, 'utf8')).trim()).toBe(first);
    const id = (await gw.deps.keys.authenticateOperator(`Bearer ${first}`)).keyId;
    await docent('operator', 'key', 'revoke', id);
    expect((await docent('operator', 'key', 'ensure', '--key-file', keyFile)).stdout).toContain('created operator key');
    expect((await readFile(keyFile, 'utf8')).trim()).not.toBe(first);
  });
});
