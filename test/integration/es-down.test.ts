import { testConfig } from '../support/config';
import { deleteTestIndexes, ingestMiniDocs, sameStack } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';
import { callApi, v2Body } from '../support/http';
import { parseSse } from '../support/sse';
import { startCuttableLink, type CuttableLink } from '../support/tcp-cut';

// Elasticsearch gone while the gateway runs: search answers 503 with Retry-After and the error shape, the assistant's
// open stream ends with an unavailable error frame; both serve again once it is back, without a restart. The gateway
// reaches the shared Elasticsearch through a link this test cuts (or holds), so the shared one is never stopped.

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

const search = () => callApi(gw.url, key, 'POST', `/discovery/v1/search/${domain}/results`, { query: 'how do I fire the kiln', pageSize: 3 });
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

it('the assistant opens its stream while Elasticsearch is gone, ends it with an unavailable error frame, and streams answers again once it is back', async () => {
  link.cut();
  try {
    const r = await ask();
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = parseSse(await r.text()).map((e) => (e.data === '[DONE]' ? e.data : JSON.parse(e.data)));
    expect(events[0]).toMatchObject({ type: 'start', messageId: expect.stringMatching(/^msg_/) });
    expect(events).toContainEqual({ type: 'error', errorText: expect.stringContaining('unavailable') });
    expect(events.some((e) => e.type === 'text-delta')).toBe(false);
  } finally {
    link.restore();
  }
  await eventually(
    async () => (await ask()).text(),
    (t) => t.includes('"type":"finish"') && !t.includes('"type":"error"'),
    'the assistant answering again',
  );
});

it('a reader sees the stream open (headers and the start frame) while retrieval waits on a paused Elasticsearch; the answer then completes', async () => {
  link.hold();
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  try {
    const r = await ask();
    expect(r.status).toBe(200);
    expect(r.headers.get('x-thread-id')).toMatch(/^thr_/);
    reader = r.body!.getReader();
    const decoder = new TextDecoder();
    let raw = '';
    while (!raw.includes('\n\n')) {
      const { value, done } = await reader.read();
      if (done) break;
      raw += decoder.decode(value, { stream: true });
    }
    const [first] = parseSse(raw);
    expect(JSON.parse(first!.data)).toMatchObject({ type: 'start', messageId: expect.stringMatching(/^msg_/), messageMetadata: { searchId: expect.stringMatching(/^srch_/) } });
    // Retrieval is still held: released now, the same stream goes on to its answer.
    link.restore();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      raw += decoder.decode(value, { stream: true });
    }
    expect(raw).toContain('"type":"text-delta"');
    expect(raw).toContain('"type":"finish"');
  } finally {
    link.restore();
    await reader?.cancel().catch(() => undefined);
  }
});
