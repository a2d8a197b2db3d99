import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { testConfig } from '../support/config';
import { deleteTestIndexes, ingestMiniDocs, sameStack } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';

// The docs as an MCP server (POST /mcp/{domain}), driven by the official SDK's client through the real gateway.
const config = testConfig();
const domain = 'docs.kiln.test';
let gw: RunningGateway;
let key: string;
let staffKey: string;
let limitedKey: string;
let otherDomainKey: string;
const perKeyAssistantLimit = 5;

beforeAll(async () => {
  await ingestMiniDocs(config, domain);
  gw = await startGateway(sameStack(config, { DOCENT_LIMIT_ASSISTANT_PER_KEY_MONTH: String(perKeyAssistantLimit) }));
  key = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain })).key;
  staffKey = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain, groups: ['staff'] })).key;
  limitedKey = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain })).key;
  otherDomainKey = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain: 'docs.other.test' })).key;
});
afterAll(async () => {
  await deleteTestIndexes(config);
  await gw?.stop();
});

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

async function connect(k: string, d = domain): Promise<Client> {
  const client = new Client({ name: 'docent-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp/${d}`), { requestInit: { headers: { authorization: `Bearer ${k}` } } });
  await client.connect(transport);
  clients.push(client);
  return client;
}

const textOf = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;
const structured = <T>(r: unknown) => (r as CallToolResult).structuredContent as T;

describe('MCP server of a docs domain', () => {
  it('lists search_docs, get_page and ask_docs with their input schemas', async () => {
    const client = await connect(key);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['ask_docs', 'get_page', 'search_docs']);
    const search = tools.find((t) => t.name === 'search_docs')!;
    expect(search.inputSchema.required).toEqual(['query']);
    expect(Object.keys(search.inputSchema.properties ?? {}).sort()).toEqual(['pageSize', 'query', 'scoreThreshold']);
  });

  it('search_docs returns passages with title, path and URL', async () => {
    const client = await connect(key);
    const r = await client.callTool({ name: 'search_docs', arguments: { query: 'install the kiln binary', pageSize: 3 } });
    expect(r.isError).toBeFalsy();
    const { results } = structured<{ results: Array<{ title: string; path: string; url: string }> }>(r);
    expect(results.length).toBeGreaterThan(0);
    expect(results.length).toBeLessThanOrEqual(3);
    expect(results).toContainEqual(expect.objectContaining({ path: 'guides/quickstart', title: 'Quickstart', url: 'https://kiln.example/guides/quickstart#install-the-kiln-binary' }));
    expect(textOf(r)).toContain('path: guides/quickstart');
  });

  it('search_docs leaves out passages scoring below scoreThreshold, as Mintlify documents it', async () => {
    const client = await connect(key);
    const search = async (args: object) =>
      structured<{ results: Array<{ path: string; score: number }> }>(await client.callTool({ name: 'search_docs', arguments: { query: 'install the kiln binary', pageSize: 10, ...args } })).results;
    const all = await search({});
    const best = await search({ scoreThreshold: 1 });
    expect(best.length).toBeGreaterThan(0);
    expect(best.length).toBeLessThan(all.length);
    expect(best.every((r) => r.score === 1)).toBe(true);
    expect(best[0]!.path).toBe(all[0]!.path);
  });

  it('get_page returns the page as Markdown, and a tool error for a page that does not exist', async () => {
    const client = await connect(key);
    const r = await client.callTool({ name: 'get_page', arguments: { path: 'guides/quickstart' } });
    expect(r.isError).toBeFalsy();
    expect(textOf(r)).toMatch(/^# Quickstart\n/);
    expect(textOf(r)).toContain('## Install the kiln binary');
    expect(textOf(r)).toContain('kiln bake');
    const missing = await client.callTool({ name: 'get_page', arguments: { path: 'guides/nothing-here' } });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain('no page guides/nothing-here');
  });

  it('ask_docs answers with citations and the thread it stored', async () => {
    const client = await connect(key);
    const r = await client.callTool({ name: 'ask_docs', arguments: { question: 'How do I install the kiln binary?' } });
    expect(r.isError).toBeFalsy();
    const out = structured<{ answer: string; sources: Array<{ url: string }>; threadId: string }>(r);
    expect(out.answer).toMatch(/\[1\]/);
    expect(out.sources.map((s) => s.url)).toContainEqual(expect.stringContaining('guides/quickstart'));
    const thread = await gw.deps.mongo.db.collection('threads').findOne({ _id: out.threadId as never, domain });
    expect(thread?.turns[0].userMessage).toBe('How do I install the kiln binary?');
  });

  it('ask_docs says the docs do not cover an off-topic question, and cites nothing', async () => {
    const client = await connect(key);
    const r = await client.callTool({ name: 'ask_docs', arguments: { question: 'What is the capital of Australia?' } });
    expect(r.isError).toBeFalsy();
    const out = structured<{ answer: string; sources: unknown[] }>(r);
    expect(out.sources).toEqual([]);
    expect(out.answer).toMatch(/^The documentation does not cover this question/);
    expect(textOf(r)).not.toContain('Sources:');
  });

  it('keeps restricted pages from keys without their group, in every tool', async () => {
    const open = await connect(key);
    const search = structured<{ results: Array<{ path: string }> }>(await open.callTool({ name: 'search_docs', arguments: { query: 'install the signing key before a release' } }));
    expect(search.results.map((x) => x.path)).not.toContain('internal/release-process');
    const page = await open.callTool({ name: 'get_page', arguments: { path: 'internal/release-process' } });
    expect(page.isError).toBe(true);
    expect(textOf(page)).not.toContain('vault');
    const answer = await open.callTool({ name: 'ask_docs', arguments: { question: 'How do staff install the signing key before a release?' } });
    expect(JSON.stringify(answer)).not.toContain('release-process');
    expect(JSON.stringify(answer)).not.toContain('vault');

    const staff = await connect(staffKey);
    const staffPage = await staff.callTool({ name: 'get_page', arguments: { path: 'internal/release-process' } });
    expect(staffPage.isError).toBeFalsy();
    expect(textOf(staffPage)).toContain('vault');
  });

  it('refuses a missing or wrong key, and a key of another domain, before any tool runs', async () => {
    await expect(connect('docent_asst_not-a-real-key')).rejects.toMatchObject({ code: 401, message: expect.stringContaining('unauthenticated') });
    await expect(connect(otherDomainKey)).rejects.toMatchObject({ code: 404, message: expect.stringContaining('not_found') });
    const plain = await fetch(`${gw.url}/mcp/${domain}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
    expect(plain.status).toBe(401);
    expect(await plain.json()).toMatchObject({ code: 'unauthenticated' });
  });

  it('answers malformed MCP requests with 400 in the error shape', async () => {
    const post = (body: string, accept = 'application/json, text/event-stream') =>
      fetch(`${gw.url}/mcp/${domain}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept }, body });
    const notRpc = await post('{"hello":"world"}');
    expect(notRpc.status).toBe(400);
    expect(await notRpc.json()).toMatchObject({ code: 'invalid_argument', error: expect.stringContaining('jsonrpc') });
    const badAccept = await post('{"jsonrpc":"2.0","id":1,"method":"tools/list"}', 'text/html');
    expect(badAccept.status).toBe(400);
    expect(await badAccept.json()).toMatchObject({ code: 'invalid_argument', error: expect.stringMatching(/accept/i) });
  });

  it('counts ask_docs against the key’s assistant limit', async () => {
    const client = await connect(limitedKey);
    for (let i = 0; i < perKeyAssistantLimit; i++) {
      const ok = await client.callTool({ name: 'ask_docs', arguments: { question: 'How do I install kiln?' } });
      expect(ok.isError).toBeFalsy();
    }
    const refused = await client.callTool({ name: 'ask_docs', arguments: { question: 'How do I install kiln?' } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/rate limit reached: 5 assistant messages for this key per month/);
  });

  it('refuses a batch of more than 10 messages, or of more than one ask_docs, with a clear 400', async () => {
    const post = (batch: object[]) =>
      fetch(`${gw.url}/mcp/${domain}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(batch),
      });
    const ask = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'ask_docs', arguments: { question: 'How do I install kiln?' } } });
    const hundredAnswers = await post(Array.from({ length: 100 }, (_, i) => ask(i)));
    expect(hundredAnswers.status).toBe(400);
    expect(await hundredAnswers.json()).toEqual({ code: 'invalid_argument', error: expect.stringContaining('a JSON-RPC batch may hold at most 10 messages') });
    const twoAnswers = await post([ask(1), ask(2)]);
    expect(twoAnswers.status).toBe(400);
    expect(await twoAnswers.json()).toEqual({ code: 'invalid_argument', error: expect.stringContaining('may call ask_docs at most 1 time') });
  });

  it('takes one of the key’s stream slots: with all of them held, the request is refused with 429', async () => {
    const { id, key: busyKey } = await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain });
    const caller = { keyId: id, kind: 'assistant' as const, orgId: 'acme', domain };
    const held = Array.from({ length: gw.deps.config.edge.streamsPerKey.assistant }, () => gw.deps.streams.acquire(caller, new AbortController().signal));
    await expect(connect(busyKey)).rejects.toMatchObject({ code: 429 });
    held.pop()!.release();
    const client = await connect(busyKey);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('ask_docs');
    for (const lease of held) lease.release();
  });
});
