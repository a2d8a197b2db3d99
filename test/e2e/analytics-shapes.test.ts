import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { testConfig } from '../support/config';
import { deleteTestIndexes, ingestMiniDocs, sameStack } from '../support/docs';
import { kilnDocsProjects } from '../support/docs-projects';
import { startGateway, type RunningGateway } from '../support/gateway';
import { v2Body } from '../support/http';

// Analytics in the docs platform's shapes (/v1/analytics/{projectId}/…), over searches and questions made through the gateway.
const config = testConfig();
const domain = 'docs.kiln.test';
let gw: RunningGateway;
let asst: string;
let admin: string;
let otherAdmin: string;

const post = (path: string, body: unknown) =>
  fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${asst}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
const search = async (query: string) => {
  const r = await post(`/discovery/v1/search/${domain}/results`, { query });
  expect(r.status).toBe(200);
  return (await r.json()) as { results: Array<{ path: string }>; searchId: string };
};
const ask = async (text: string) => {
  const r = await post(`/discovery/v2/assistant/${domain}/message`, v2Body(text));
  await r.text();
  return r.headers.get('x-thread-id')!;
};
const analytics = (path: string, key = admin) => fetch(`${gw.url}/v2/agent/kiln/analytics/${path}`, { headers: { authorization: `Bearer ${key}` } });

beforeAll(async () => {
  await ingestMiniDocs(config, domain);
  gw = await startGateway(sameStack(config));
  ({ asst, admin, otherAdmin } = await kilnDocsProjects(gw, domain));
});
afterAll(async () => {
  await deleteTestIndexes(config);
  await gw?.stop();
});

type Row = {
  query: string;
  searches: number;
  hits: number;
  clicks: number;
  clickThrough: number;
  topClickedPage: { path: string; clicks: number } | null;
  via: { api: number; mcp: number; assistant: number };
};
const rowOf = async (query: string) => {
  const r = await analytics('searches');
  expect(r.status).toBe(200);
  return ((await r.json()) as { queries: Row[] }).queries.find((q) => q.query.toLowerCase().startsWith(query));
};

describe('analytics in the docs platform shapes', () => {
  it('records searches with their result counts, and a reported click changes click-through and the top clicked page', async () => {
    const first = await search('install kiln');
    await search('Install  kiln?');
    expect(first.searchId).toMatch(/^srch_/);
    expect(first.results.length).toBeGreaterThan(0);
    const before = await rowOf('install');
    expect(before).toMatchObject({ searches: 2, hits: first.results.length, clicks: 0, clickThrough: 0, topClickedPage: null, via: { api: 2, mcp: 0 } });

    const opened = first.results[0]!.path;
    expect((await post(`/discovery/v1/search/${domain}/click`, { searchId: first.searchId, path: opened })).status).toBe(204);
    expect(await rowOf('install')).toMatchObject({ searches: 2, clicks: 1, clickThrough: 0.5, topClickedPage: { path: opened, clicks: 1 } });

    const unknown = await post(`/discovery/v1/search/${domain}/click`, { searchId: 'srch_nope', path: opened });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'not_found' });
  });

  it('exports conversations a page at a time with a cursor, labelling an answer the docs do not cover as not_in_docs', async () => {
    const covered = await ask('How do I install kiln?');
    const notCovered = await ask('What is the capital of Australia?');
    const page1 = await analytics('assistant?limit=1');
    expect(page1.status).toBe(200);
    const b1 = (await page1.json()) as { conversations: Array<{ threadId: string; turns: Array<{ kind: string; question: string; sources: unknown[] }> }>; nextCursor: string | null };
    expect(b1.conversations).toHaveLength(1);
    expect(b1.conversations[0]!.threadId).toBe(notCovered);
    expect(b1.conversations[0]!.turns[0]).toMatchObject({ question: 'What is the capital of Australia?', kind: 'not_in_docs' });
    expect(b1.nextCursor).toEqual(expect.any(String));

    const b2 = (await (await analytics(`assistant?limit=1&cursor=${b1.nextCursor}`)).json()) as typeof b1;
    expect(b2.conversations[0]!.threadId).toBe(covered);
    expect(b2.conversations[0]!.turns[0]).toMatchObject({ kind: 'answered' });
    expect(b2.conversations[0]!.turns[0]!.sources.length).toBeGreaterThan(0);
    expect(b2.nextCursor).toBeNull();
  });

  it('counts up and down ratings on each page the rated answer cited', async () => {
    const rated = await ask('How do I bake my site with kiln?');
    expect((await post(`/discovery/v1/assistant/${domain}/feedback`, { threadId: rated, rating: 'down' })).status).toBe(204);
    const exported = (await (await analytics('assistant?limit=100')).json()) as { conversations: Array<{ threadId: string; turns: Array<{ sources: Array<{ path: string }> }> }> };
    const cited = new Set(exported.conversations.find((c) => c.threadId === rated)!.turns[0]!.sources.map((s) => s.path));
    expect(cited.size).toBeGreaterThan(0);
    const r = await analytics('feedback/by-page');
    expect(r.status).toBe(200);
    const { pages } = (await r.json()) as { pages: Array<{ path: string; up: number; down: number }> };
    expect(pages.map((p) => p.path).sort()).toEqual([...cited].sort());
    for (const p of pages) expect(p).toMatchObject({ up: 0, down: 1 });
  });

  it('refuses another project’s admin key (404) and bad ranges or limits (400)', async () => {
    for (const p of ['searches', 'assistant', 'feedback/by-page']) expect((await analytics(p, otherAdmin)).status).toBe(404);
    for (const q of ['searches?limit=0', 'assistant?limit=abc', 'feedback/by-page?from=yesterday', 'searches?from=2026-11-20&to=2026-11-01', 'assistant?cursor=zz']) {
      const r = await analytics(q);
      expect(r.status).toBe(400);
      expect(await r.json()).toMatchObject({ code: 'invalid_argument', error: expect.any(String) });
    }
  });

  it('records a search made through the MCP tool as via mcp, and the retrieval behind an answer as via assistant', async () => {
    const client = new Client({ name: 'docent-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp/${domain}`), { requestInit: { headers: { authorization: `Bearer ${asst}` } } }));
    try {
      await client.callTool({ name: 'search_docs', arguments: { query: 'quickstart for kiln' } });
    } finally {
      await client.close();
    }
    await ask('quickstart for kiln');
    expect(await rowOf('quickstart')).toMatchObject({ searches: 2, via: { api: 0, mcp: 1, assistant: 1 } });
  });
});
