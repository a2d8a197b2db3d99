import { testConfig } from '../support/config';
import { deleteTestIndexes, ingestMiniDocs, sameStack } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';
import { callApi, v2Body } from '../support/http';
import { startCuttableLink, type CuttableLink } from '../support/tcp-cut';

// Elasticsearch gone while the gateway runs: search and the assistant answer 503 with Retry-After and the error
// shape, then serve again once it is back, without a restart. The gateway reaches the shared Elasticsearch through a
// link this test cuts, so the shared one is never stopped.

const config = testConfig();
const domain = 'docs.es-down.test';
let link: CuttableLink;
let gw: RunningGateway;
let key: string;

beforeAll(async () => {
  await ingestMiniDocs(config, domain);
  const es = new URL(config.elasticsearch.nodes[0]!);
  link = await startCuttableLink({ host: es.hostname, port: Number(es.port) });
  gw = await startGateway(sameStack(config, { DOCENT_ES_URL: `${es.protocol}//${link.address}` }));
  key = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain })).key;
});
afterAll(async () => {
  link?.restore();
  await gw?.stop();
  await link?.close();
  await deleteTestIndexes(config);
});

const search = () => callApi(gw.url, key, 'POST', `/discovery/v1/search/${domain}`, { query: 'how do I fire the kiln', pageSize: 3 });
const ask = () => callApi(gw.url, key, 'POST', `/discovery/v2/assistant/${domain}/message`, v2Body('how do I fire the kiln?'));

async function expectUnavailable(r: Awaited<ReturnType<typeof search>>): Promise<void> {
  expect(r.status).toBe(503);
  expect(r.headers.get('retry-after')).toBe('5');
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  expect(await r.json()).toEqual({ error: expect.stringContaining('unavailable'), code: 'unavailable', retryAfterSeconds: 5 });
}

async function eventually<T>(probe: () => Promise<T>, ok: (v: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

it('search answers 503 with Retry-After while Elasticsearch is gone, and passages again once it is back', async () => {
  const before = await search();
  expect(before.status).toBe(200);
  expect((await before.json()).results.length).toBeGreaterThan(0);
  link.cut();
  try {
    await expectUnavailable(await search());
  } finally {
    link.restore();
  }
  const after = await eventually(search, (r) => r.status === 200, 'search serving again');
  expect((await after.json()).results.length).toBeGreaterThan(0);
});

it('the assistant answers 503 with Retry-After while Elasticsearch is gone, and streams answers again once it is back', async () => {
  link.cut();
  try {
    await expectUnavailable(await ask());
  } finally {
    link.restore();
  }
  const after = await eventually(ask, (r) => r.status === 200, 'the assistant serving again');
  expect(after.headers.get('content-type')).toMatch(/^text\/event-stream/);
  expect(await after.text()).toContain('"type":"finish"');
});
