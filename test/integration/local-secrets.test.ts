import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config';
import { startGateway } from '../support/gateway';
import { callApi } from '../support/http';

// `npm start` makes up the secrets a newcomer would otherwise have to know about (infra/local-secret.sh), and reaches
// the local stack with the credentials infra/stack.sh gave it (`stack.sh env`). Both run here on a cache of their own.

const run = promisify(execFile);
const root = path.resolve(__dirname, '../..');
let cache: string;
let runDir: string;

beforeEach(async () => {
  cache = await mkdtemp(path.join(os.tmpdir(), 'docent-cache-'));
  runDir = path.join(cache, 'run');
});
afterEach(() => rm(cache, { recursive: true, force: true }));

const secret = async (name: string) => (await run('bash', [path.join(root, 'infra/local-secret.sh'), name], { env: { ...process.env, DOCENT_CACHE: cache } })).stdout;
const stackEnv = async () =>
  (await run('bash', [path.join(root, 'infra/stack.sh'), 'env'], { env: { ...process.env, DOCENT_CACHE: cache, DOCENT_RUN_DIR: runDir, DOCENT_MONGO_PORT: '27999', DOCENT_ES_PORT: '9999' } })).stdout;

describe('the secret key npm start creates', () => {
  it('is made on first run as 32 random bytes in a file only its owner reads, and kept afterwards', async () => {
    const first = await secret('secret-key');
    expect(Buffer.from(first, 'base64')).toHaveLength(32);
    const file = path.join(cache, 'secret-key');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await secret('secret-key')).toBe(first);
    expect(await secret('metrics-token')).not.toBe(first);
  });

  it('is one value when several first runs race', async () => {
    const values = await Promise.all([1, 2, 3, 4, 5, 6].map(() => secret('secret-key')));
    expect(new Set(values).size).toBe(1);
  });

  it('is refused, not used, once others may read its file', async () => {
    await secret('secret-key');
    await chmod(path.join(cache, 'secret-key'), 0o644);
    await expect(secret('secret-key')).rejects.toMatchObject({ stderr: expect.stringContaining('chmod 600') });
  });

  it('turns webhooks on at once for a gateway given it, while the gateway never reads the file itself', async () => {
    const key = await secret('secret-key');
    expect(loadConfig({ DOCENT_CACHE: cache }).secretKey).toBeUndefined();
    // A loopback receiver (allowed here), so checking the URL needs no name lookup.
    const gw = await startGateway({ DOCENT_SECRET_KEY: key, DOCENT_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8' });
    try {
      await gw.deps.tenancy.createOrg('acme');
      await gw.deps.tenancy.createProject({ _id: 'hooks', orgId: 'acme', repository: 'acme/hooks', ref: 'main' });
      const admin = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'hooks' })).key;
      const created = await callApi(gw.url, admin, 'POST', '/v2/agent/hooks/webhooks', { url: 'https://127.0.0.1:9/docent', events: ['agent_job.completed'] });
      expect(created.status).toBe(201);
      expect((await created.json()).secret).toMatch(/^whsec_/);
    } finally {
      await gw.stop();
    }
  });
});

describe('infra/stack.sh env', () => {
  it('gives nothing for parts started without credentials (a stack from before them)', async () => {
    expect(await stackEnv()).toBe('');
  });

  it('gives the MongoDB URL and Elasticsearch user with the passwords of the cache for parts started with them', async () => {
    await run('mkdir', ['-p', runDir]);
    await writeFile(path.join(runDir, 'ferretdb-27999.secured'), '');
    await writeFile(path.join(runDir, 'elasticsearch-9999.secured'), '');
    const lines = (await stackEnv()).trim().split('\n');
    const mongoPassword = await readFile(path.join(cache, 'mongo-password'), 'utf8');
    const esPassword = await readFile(path.join(cache, 'es-password'), 'utf8');
    expect(mongoPassword).not.toBe(esPassword);
    expect(lines).toEqual([
      `DOCENT_MONGO_URL=mongodb://docent:${mongoPassword}@127.0.0.1:27999/?authSource=admin`,
      'DOCENT_ES_URL=http://127.0.0.1:9999',
      'DOCENT_ES_USERNAME=docent',
      `DOCENT_ES_PASSWORD=${esPassword}`,
    ]);
    expect(loadConfig(Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))).elasticsearch.auth).toEqual({ username: 'docent', password: esPassword });
  });
});
