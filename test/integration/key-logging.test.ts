import { createHash } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { Code, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { AgentService } from '../../src/gen/agent/v2/agent_pb';
import { route } from '../../src/rest/router';
import { startGateway, type RunningGateway } from '../support/gateway';

/** Starts a gateway logging at debug level into memory. */
async function loggingGateway(overrides: Record<string, string> = {}, mongoDown = false) {
  const lines: string[] = [];
  const destination = new PassThrough();
  destination.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  const gw = await startGateway(
    { DOCENT_LOG_LEVEL: 'debug', ...overrides },
    {
      logDestination: destination,
      mongoDown,
      // A failure whose message carries the caller's Authorization header, as a careless library might build it.
      extraRoutes: () => [
        route({
          method: 'GET',
          path: '/test/fail',
          summary: 'test only',
          auth: 'admin',
          handler: async (req) => {
            throw new Error(`upstream refused ${req.headers.authorization}`);
          },
        }),
      ],
    },
  );
  return { gw, lines };
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe('API keys in logs and storage', () => {
  let gw: RunningGateway;
  let lines: string[];
  let adminKey: string;
  let assistantKey: string;

  beforeAll(async () => {
    ({ gw, lines } = await loggingGateway());
    adminKey = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'proj-a' })).key;
    assistantKey = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', projectId: 'proj-a', domain: 'docs.acme.dev' })).key;
  });
  afterAll(() => gw.stop());

  it('never writes a key to the log, on success, refusal or failure, over REST and Connect', async () => {
    expect((await fetch(`${gw.url}/v2/agent/proj-a/job/job_1`, { headers: bearer(adminKey) })).status).toBe(404);
    expect((await fetch(`${gw.url}/v2/agent/proj-a/job/job_1`, { headers: bearer(assistantKey) })).status).toBe(403);
    expect((await fetch(`${gw.url}/v2/agent/proj-a/job/job_1?key=${adminKey}`, { headers: bearer(`${adminKey}x`) })).status).toBe(401);
    const failed = await fetch(`${gw.url}/test/fail`, { headers: bearer(adminKey) });
    expect(failed.status).toBe(500);
    expect(await failed.text()).not.toContain(adminKey);
    const client = createClient(AgentService, createConnectTransport({ baseUrl: gw.url, httpVersion: '1.1' }));
    await expect(client.getAgentJob({ projectId: 'proj-a', jobId: 'job_1' }, { headers: bearer(adminKey) })).rejects.toMatchObject({ name: 'ConnectError', code: Code.NotFound });

    // The requests were logged (access lines at debug, the failure at error) ...
    expect(lines.filter((l) => JSON.parse(l).msg === 'request').length).toBeGreaterThanOrEqual(4);
    const failure = lines.find((l) => JSON.parse(l).msg === 'request failed');
    expect(failure).toContain('upstream refused Bearer docent_admin_[redacted]');
    // ... and no line holds a key, whole or in part.
    const log = lines.join('\n');
    for (const key of [adminKey, assistantKey]) expect(log).not.toContain(key.slice(-20));
  });

  it('stores only the SHA-256 of each key', async () => {
    const docs = await gw.deps.mongo.db.collection('api_keys').find().toArray();
    expect(docs).toHaveLength(2);
    const stored = JSON.stringify(docs);
    for (const key of [adminKey, assistantKey]) {
      expect(stored).not.toContain(key.slice(-20));
      expect(docs.map((d) => d.hash)).toContain(createHash('sha256').update(key).digest('hex'));
    }
  });
});

describe('API keys in logs when MongoDB is down', () => {
  it('logs the failure without the key', async () => {
    const { gw, lines } = await loggingGateway({ DOCENT_MONGO_URL: 'mongodb://127.0.0.1:1', DOCENT_DEPENDENCY_TIMEOUT_MS: '300' }, true);
    try {
      const key = 'docent_admin_' + 'Z'.repeat(43);
      const r = await fetch(`${gw.url}/v2/agent/proj-a/job/job_1`, { headers: bearer(key) });
      expect(r.status).toBe(503);
      expect(lines.some((l) => JSON.parse(l).msg === 'request failed')).toBe(true);
      expect(lines.join('\n')).not.toContain('Z'.repeat(20));
    } finally {
      await gw.stop();
    }
  });
});
