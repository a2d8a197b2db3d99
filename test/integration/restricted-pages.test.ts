import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { SearchService } from '../../src/gen/discovery/v1/search_pb';
import { AssistantService as AssistantV2 } from '../../src/gen/discovery/v2/assistant_pb';
import { testConfig } from '../support/config';
import { deleteTestIndexes, ingestMiniDocs, sameStack } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';
import { callApi, sseChunks, v2Body } from '../support/http';

// The mini docs hold one page with `groups: [staff]` (internal/release-process); every other page is public.
const config = testConfig();
const domain = 'docs.kiln.test';
const restricted = 'internal/release-process';
const question = 'how do staff install the signing key before a release?';
let gw: RunningGateway;
const keys: Record<'plain' | 'staff' | 'beta', string> = { plain: '', staff: '', beta: '' };

beforeAll(async () => {
  await ingestMiniDocs(config, domain);
  gw = await startGateway(sameStack(config, { DOCENT_MODEL_PROVIDER: '' }));
  keys.plain = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain })).key;
  keys.staff = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain, groups: ['staff'] })).key;
  keys.beta = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain, groups: ['beta'] })).key;
});
afterAll(async () => {
  await gw?.stop();
  await deleteTestIndexes(config);
});

/** The pages a REST search returns. */
async function searchedPaths(key: string, filter?: object): Promise<string[]> {
  const r = await callApi(gw.url, key, 'POST', `/discovery/v1/search/${domain}/results`, { query: question, pageSize: 10, ...(filter ? { filter } : {}) });
  expect(r.status).toBe(200);
  return (await r.json()).results.map((x: { path: string }) => x.path);
}

/** The source URLs and the text of a v2 assistant answer (extractive: built from the passages it was given). */
async function answer(key: string, filter?: object): Promise<{ sources: string[]; text: string }> {
  const r = await callApi(gw.url, key, 'POST', `/discovery/v2/assistant/${domain}/message`, v2Body(question, filter ? { filter } : {}));
  expect(r.status).toBe(200);
  const chunks = sseChunks(await r.text());
  return {
    sources: chunks.filter((c) => c.type === 'source-url').map((c) => c.url as string),
    text: chunks
      .filter((c) => c.type === 'text-delta')
      .map((c) => c.delta as string)
      .join(''),
  };
}

describe('a page restricted to a group', () => {
  it('is found by a key allowed that group, in search and in assistant answers', async () => {
    expect((await searchedPaths(keys.staff))[0]).toBe(restricted);
    const a = await answer(keys.staff);
    expect(a.sources.some((u) => u.startsWith(`https://kiln.example/${restricted}`))).toBe(true);
    expect(a.text).toContain('vault');
  });

  it('is invisible to a key without groups, even when its request claims the group', async () => {
    for (const filter of [undefined, { groups: ['staff'] }, { groups: ['staff', 'customers'] }]) {
      const paths = await searchedPaths(keys.plain, filter);
      expect(paths.length).toBeGreaterThan(0); // public pages still answer
      expect(paths).not.toContain(restricted);
      const a = await answer(keys.plain, filter);
      expect(a.sources.filter((u) => u.includes(restricted))).toEqual([]);
      expect(a.text).not.toContain('vault');
    }
  });

  it('is invisible to a key allowed other groups only', async () => {
    expect(await searchedPaths(keys.beta)).not.toContain(restricted);
    expect(await searchedPaths(keys.beta, { groups: ['staff'] })).not.toContain(restricted);
  });

  it('is hidden from an allowed key when its own filter narrows to other groups', async () => {
    expect(await searchedPaths(keys.staff, { groups: ['customers'] })).not.toContain(restricted);
    expect(await searchedPaths(keys.staff, { groups: ['staff'] })).toContain(restricted);
  });

  it('follows the same rule over Connect: Search and v2 SendMessage', async () => {
    const transport = createConnectTransport({ baseUrl: gw.url, httpVersion: '1.1' });
    const search = createClient(SearchService, transport);
    const assistant = createClient(AssistantV2, transport);
    const headers = (key: string) => ({ authorization: `Bearer ${key}` });
    const claimStaff = { version: '', language: '', groups: ['staff'], pathPrefix: '' };
    const plain = await search.search({ domain, query: question, pageSize: 10, filter: claimStaff }, { headers: headers(keys.plain) });
    expect(plain.results.map((r) => r.path)).not.toContain(restricted);
    const staff = await search.search({ domain, query: question, pageSize: 10 }, { headers: headers(keys.staff) });
    expect(staff.results.map((r) => r.path)).toContain(restricted);

    const sources: string[] = [];
    const events = assistant.sendMessage({ domain, fp: 'anonymous', messages: [{ role: 'user', parts: [{ type: 'text', text: question }] }], filter: claimStaff }, { headers: headers(keys.plain) });
    let text = '';
    for await (const e of events) {
      if (e.event.case === 'source') sources.push(e.event.value.path);
      if (e.event.case === 'textDelta') text += e.event.value;
    }
    // The public pages do not cover the question, so the answer (it did stream) cites nothing, and never the restricted page.
    expect(text).toMatch(/^The documentation does not cover this question/);
    expect(sources).not.toContain(restricted);
  });
});

describe('a thread started by a key with groups', () => {
  const ask = (key: string, extra: object = {}) => callApi(gw.url, key, 'POST', `/discovery/v2/assistant/${domain}/message`, v2Body(question, extra));
  const threads = () => gw.deps.mongo.db.collection<{ _id: string; turns: unknown[]; groups?: string[] }>('threads');

  it('cannot be continued by a public key that knows its id: the public key gets a new thread, never the staff turns', async () => {
    const staff = await ask(keys.staff);
    const staffThread = staff.headers.get('x-thread-id')!;
    expect(await staff.text()).toContain('vault');
    const plain = await ask(keys.plain, { threadId: staffThread });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('x-thread-id')).not.toBe(staffThread);
    expect(await plain.text()).not.toContain('vault');
    expect((await threads().findOne({ _id: staffThread }))?.turns).toHaveLength(1);
    const rating = await callApi(gw.url, keys.plain, 'POST', `/discovery/v1/assistant/${domain}/feedback`, { threadId: staffThread, rating: 'down' });
    expect(rating.status).toBe(404);
    // The key that started it continues it.
    const again = await ask(keys.staff, { threadId: staffThread });
    expect(again.headers.get('x-thread-id')).toBe(staffThread);
  });

  it('holds at most 100 turns: the next question is refused with a clear 400', async () => {
    const first = await ask(keys.plain);
    const threadId = first.headers.get('x-thread-id')!;
    await first.text();
    const turn = (await threads().findOne({ _id: threadId }))!.turns[0];
    await threads().updateOne({ _id: threadId }, { $set: { turns: Array.from({ length: 100 }, () => turn) } });
    const full = await ask(keys.plain, { threadId });
    expect(full.status).toBe(400);
    expect(await full.json()).toEqual({ error: expect.stringContaining('has reached 100 turns; start a new thread'), code: 'failed_precondition' });
  });

  it('stores at most 4,000 characters of page context per turn', async () => {
    const context = Array.from({ length: 20 }, (_, i) => ({ type: 'textSelection', value: `${i}`.padEnd(10_000, 'x') }));
    const r = await ask(keys.plain, { context });
    expect([r.status, r.status === 200 ? '' : await r.text()]).toEqual([200, '']);
    await r.text();
    const stored = await threads().findOne({ _id: r.headers.get('x-thread-id')! });
    const kept = (stored!.turns[0] as { context: Array<{ value: string }> }).context;
    expect(kept.reduce((n, c) => n + c.value.length, 0)).toBe(4000);
  });
});
