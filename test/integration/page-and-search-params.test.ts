import { Code, ConnectError } from '@connectrpc/connect';
import { createDocentClient } from '../../src/client';
import { testConfig } from '../support/config';
import { deleteTestIndexes, ingestMiniDocs, sameStack } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';
import { callApi } from '../support/http';

// Mintlify's page endpoint and search parameters (docs/assistant.md) over REST, Connect and the typed
// client, against the mini docs: internal/release-process is restricted to the `staff` group, every other page public.
const config = testConfig();
const domain = 'docs.kiln-pages.test';
const restricted = 'internal/release-process';
let gw: RunningGateway;
const keys = { plain: '', staff: '' };

beforeAll(async () => {
  await ingestMiniDocs(config, domain);
  gw = await startGateway(sameStack(config, { DOCENT_MODEL_PROVIDER: '' }));
  keys.plain = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain })).key;
  keys.staff = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain, groups: ['staff'] })).key;
});
afterAll(async () => {
  await gw?.stop();
  await deleteTestIndexes(config);
});

const page = (key: string, body: object) => callApi(gw.url, key, 'POST', `/discovery/v1/page/${domain}`, body);
const search = (key: string, body: object) => callApi(gw.url, key, 'POST', `/discovery/v1/search/${domain}/results`, body);

describe('POST /discovery/v1/page/{domain}', () => {
  it("returns a public page's Markdown, whichever way the path is written", async () => {
    for (const path of ['index', '/index', 'index.md']) {
      const r = await page(keys.plain, { path });
      expect(r.status).toBe(200);
      const body = await r.json();
      expect(body.path).toBe('index');
      expect(body.content).toMatch(/^# Kiln\n/);
      expect(body.content).toContain('Kiln bakes static sites from Markdown.');
    }
  });

  it('returns a restricted page to a key of its group, and 404 to a key without it, or when groups narrow it away', async () => {
    const staff = await page(keys.staff, { path: restricted });
    expect(staff.status).toBe(200);
    expect((await staff.json()).content).toContain('signing key from the vault');
    for (const [key, body] of [
      [keys.plain, { path: restricted }],
      [keys.plain, { path: restricted, groups: ['staff'] }],
      [keys.staff, { path: restricted, groups: ['customers'] }],
    ] as const) {
      const r = await page(key, body);
      expect(r.status).toBe(404);
      const err = await r.json();
      expect(err.code).toBe('not_found');
      expect(JSON.stringify(err)).not.toContain('vault');
    }
  });

  it('is 404 for an unknown path, the root or an empty one (Mintlify takes any path), with Mintlify’s message', async () => {
    const unknown = await page(keys.plain, { path: 'guides/nope' });
    expect(unknown.status).toBe(404);
    const error = `no page guides/nope in the documentation of ${domain}`;
    expect(await unknown.json()).toEqual({ error, code: 'not_found', message: error });
    expect((await page(keys.plain, { path: '/' })).status).toBe(404);
    const empty = await page(keys.plain, { path: ' ' });
    expect(empty.status).toBe(404);
    expect((await empty.json()).code).toBe('not_found');
  });

  it('answers the same over Connect with the typed client', async () => {
    const staff = createDocentClient({ baseUrl: gw.url, apiKey: keys.staff });
    const got = await staff.search.getPage({ domain, path: restricted });
    expect(got.path).toBe(restricted);
    expect(got.content).toContain('signing key from the vault');
    const plain = createDocentClient({ baseUrl: gw.url, apiKey: keys.plain });
    const refused = await plain.search.getPage({ domain, path: restricted }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).code).toBe(Code.NotFound);
  });
});

describe('search pageSize and scoreThreshold', () => {
  const query = 'install kiln quickstart';

  it('scores results 0..1 against the best, and leaves out those below scoreThreshold', async () => {
    const all = (await (await search(keys.plain, { query, pageSize: 50 })).json()).results as Array<{ path: string; score: number }>;
    expect(all.length).toBeGreaterThan(2);
    expect(all[0]!.score).toBe(1);
    for (const r of all) expect(r.score).toBeGreaterThanOrEqual(0);
    for (const r of all) expect(r.score).toBeLessThanOrEqual(1);
    // A cut just above the weakest result's score.
    const cut = [...new Set(all.map((r) => r.score))].sort((a, b) => a - b)[1]!;
    const above = (await (await search(keys.plain, { query, pageSize: 50, scoreThreshold: cut })).json()).results as Array<{ score: number }>;
    expect(above.length).toBeLessThan(all.length);
    expect(above.length).toBe(all.filter((r) => r.score >= cut).length);
    const best = (await (await search(keys.plain, { query, pageSize: 50, scoreThreshold: 1 })).json()).results as Array<{ path: string }>;
    expect(best[0]!.path).toBe(all[0]!.path);
  });

  it('returns at most pageSize results', async () => {
    expect((await (await search(keys.plain, { query, pageSize: 1 })).json()).results).toHaveLength(1);
    expect((await (await search(keys.plain, { query, pageSize: 2 })).json()).results).toHaveLength(2);
  });

  it('refuses pageSize outside 1..50 and scoreThreshold outside 0..1 with a 400', async () => {
    for (const bad of [{ pageSize: 0 }, { pageSize: 51 }, { pageSize: 2.5 }, { scoreThreshold: -0.1 }, { scoreThreshold: 1.5 }, { scoreThreshold: 'high' }]) {
      const r = await search(keys.plain, { query, ...bad });
      expect(r.status).toBe(400);
      const err = await r.json();
      expect(err.code).toBe('invalid_argument');
      expect(err.error).toContain(Object.keys(bad)[0]);
    }
  });

  it('takes the same parameters over Connect', async () => {
    const client = createDocentClient({ baseUrl: gw.url, apiKey: keys.plain });
    const all = await client.search.search({ domain, query, pageSize: 50 });
    const cut = [...new Set(all.results.map((r) => r.score))].sort((a, b) => a - b)[1]!;
    const above = await client.search.search({ domain, query, pageSize: 50, scoreThreshold: cut });
    expect(above.results.length).toBe(all.results.filter((r) => r.score >= cut).length);
    const bad = await client.search.search({ domain, query, scoreThreshold: 2 }).catch((e: unknown) => e);
    expect((bad as ConnectError).code).toBe(Code.InvalidArgument);
  });
});

describe('OpenAPI', () => {
  it('documents the page endpoint and the search parameters', async () => {
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as {
      paths: Record<string, { post?: { requestBody?: { content: Record<string, { schema: { properties?: Record<string, { minimum?: number; maximum?: number }> } }> } } }>;
    };
    const bodyOf = (path: string) => doc.paths[path]?.post?.requestBody?.content['application/json']?.schema.properties ?? {};
    expect(Object.keys(bodyOf('/discovery/v1/page/{domain}')).sort()).toEqual(['groups', 'path']);
    const search = bodyOf('/discovery/v1/search/{domain}');
    expect(search.pageSize).toMatchObject({ minimum: 1, maximum: 50 });
    expect(search.scoreThreshold).toMatchObject({ minimum: 0, maximum: 1 });
  });
});
