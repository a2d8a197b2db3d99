import net from 'node:net';
import { z } from 'zod';
import { projectOrigins } from '../../src/edge/cors';
import { route } from '../../src/rest/router';
import { restRoutes } from '../../src/rest/routes';
import { startGateway, type RunningGateway } from '../support/gateway';

// A stand-in for the assistant endpoints (written elsewhere): project-origin CORS and the agent job limit.
const testRoutes: Parameters<typeof startGateway>[1] = {
  extraRoutes: (deps) => [
    route({
      method: 'POST',
      path: '/test/assistant/{domain}/message',
      summary: 'test only',
      auth: 'assistant',
      cors: projectOrigins(deps.tenancy),
      body: z.object({ text: z.string().min(1) }),
      handler: async (req) => {
        const admitted = await deps.limits.consumeAgentJob(req.params.domain!);
        return { status: 200, body: { echo: req.body.text }, headers: admitted.headers };
      },
    }),
  ],
};

let gw: RunningGateway;
const allowed = 'https://docs-site.acme.dev';

beforeAll(async () => {
  gw = await startGateway({ DOCENT_REQUEST_TIMEOUT_MS: '1000', DOCENT_LIMIT_JOBS_PER_HOUR: '2' }, testRoutes);
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'docs', orgId: 'acme', repository: 'acme/docs', ref: 'main', domain: 'docs.acme.dev', allowedOrigins: [allowed] });
  await gw.deps.tenancy.createProject({ _id: 'other', orgId: 'acme', repository: 'acme/other', ref: 'main', domain: 'other.acme.dev' });
});
afterAll(() => gw.stop());

const json = (r: Response): Promise<any> => r.json();
const expectErrorShape = async (r: Response, status: number, code: string) => {
  expect(r.status).toBe(status);
  expect(r.headers.get('content-type')).toBe('application/json');
  const body = await json(r);
  expect(body).toMatchObject({ code, error: expect.any(String) });
  return body;
};
const post = (path: string, body: string, headers: Record<string, string> = {}) => fetch(gw.url + path, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });

describe('CORS for project origins', () => {
  const preflight = (domain: string, origin: string) =>
    fetch(`${gw.url}/test/assistant/${domain}/message`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });

  it('answers the preflight of an allowed origin', async () => {
    const r = await preflight('docs.acme.dev', allowed);
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-origin')).toBe(allowed);
    expect(r.headers.get('access-control-allow-methods')).toBe('POST');
    expect(r.headers.get('access-control-allow-headers')).toContain('authorization');
    expect(r.headers.get('access-control-allow-headers')).toContain('content-type');
    expect(r.headers.get('vary')).toBe('Origin');
  });

  it('refuses the preflight of another origin, and of an origin allowed only for another project', async () => {
    for (const [domain, origin] of [
      ['docs.acme.dev', 'https://evil.example'],
      ['other.acme.dev', allowed],
      ['nope.acme.dev', allowed],
    ] as const) {
      const r = await preflight(domain, origin);
      await expectErrorShape(r, 403, 'permission_denied');
      expect(r.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it('refuses a browser request from another origin before it uses any quota, and serves the allowed one', async () => {
    const refused = await post('/test/assistant/docs.acme.dev/message', '{"text":"hi"}', { origin: 'https://evil.example' });
    await expectErrorShape(refused, 403, 'permission_denied');
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();

    const ok = await post('/test/assistant/docs.acme.dev/message', '{"text":"hi"}', { origin: allowed });
    expect(ok.status).toBe(200);
    expect(await json(ok)).toEqual({ echo: 'hi' });
    expect(ok.headers.get('access-control-allow-origin')).toBe(allowed);
    expect(ok.headers.get('access-control-expose-headers')).toContain('ratelimit-remaining');
    expect(ok.headers.get('ratelimit-remaining')).toBe('1'); // the refused request did not count
  });

  it('serves requests without Origin (servers) without CORS headers, and answers 429 with the limit headers', async () => {
    const ok = await post('/test/assistant/docs.acme.dev/message', '{"text":"again"}');
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBeNull();
    expect(ok.headers.get('ratelimit-remaining')).toBe('0');

    const limited = await post('/test/assistant/docs.acme.dev/message', '{"text":"more"}', { origin: allowed });
    const body = await expectErrorShape(limited, 429, 'resource_exhausted');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(body.retryAfterSeconds).toBe(retryAfter);
    expect(limited.headers.get('ratelimit-limit')).toBe('2');
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('ratelimit-reset')).toBe(String(retryAfter));
    // The browser can read the 429 and its headers.
    expect(limited.headers.get('access-control-allow-origin')).toBe(allowed);
  });

  it('leaves routes that did not opt in without CORS headers', async () => {
    const r = await fetch(gw.url + '/healthz', { headers: { origin: allowed } });
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
    const pre = await fetch(gw.url + '/healthz', { method: 'OPTIONS', headers: { origin: allowed, 'access-control-request-method': 'GET' } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('allow')).toBe('GET, OPTIONS');
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('/openapi.json', () => {
  it('describes every REST route, with bearer security and the error shape', async () => {
    const r = await fetch(gw.url + '/openapi.json', { headers: { origin: 'https://anyone.example' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    const doc = await json(r);
    expect(doc.openapi).toBe('3.1.0');
    for (const rt of restRoutes(gw.deps)) {
      const op = doc.paths[rt.path]?.[rt.method.toLowerCase()];
      expect(op).toBeDefined();
      expect(op.summary).toBe(rt.summary);
      // Keys are per project; operator and metrics tokens are the operator's own settings. An operator key covering
      // the project may call a project's admin routes; the operator API's own routes say theirs.
      const scheme = rt.auth === 'admin' || rt.auth === 'assistant' ? `${rt.auth}Key` : `${rt.auth}Token`;
      const projectAdmin = rt.auth === 'admin' && rt.path.includes('{projectId}');
      const expected = rt.security ?? (rt.auth === 'none' ? [] : [{ [scheme]: [] }, ...(projectAdmin ? [{ operatorKey: [] }] : [])]);
      expect(op.security).toEqual(expected);
      expect(op.responses['4XX'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
      const names = [...rt.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      expect((op.parameters ?? []).map((p: { name: string }) => p.name)).toEqual(names);
    }
    expect(doc.components.securitySchemes.adminKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.metricsToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.schemas.Error.required).toEqual(['error', 'code']);
  });
});

describe('input limits', () => {
  const path = '/test/assistant/other.acme.dev/message';

  it('refuses bodies that are not JSON, not valid JSON, not matching the schema, or larger than 1 MiB', async () => {
    await expectErrorShape(await post(path, 'text=hi', { 'content-type': 'application/x-www-form-urlencoded' }), 400, 'invalid_argument');
    await expectErrorShape(await post(path, '{"text":"hi"}', { 'content-type': 'text/plain' }), 400, 'invalid_argument');
    await expectErrorShape(await post(path, '{"text":'), 400, 'invalid_argument');
    const schema = await expectErrorShape(await post(path, '{"text":""}'), 400, 'invalid_argument');
    expect(schema.error).toContain('text');
    await expectErrorShape(await post(path, JSON.stringify({ text: 'x'.repeat(1024 * 1024 + 1) })), 400, 'invalid_argument');
    const ok = await post(path, '{"text":"hi"}', { 'content-type': 'application/json; charset=utf-8' });
    expect(ok.status).toBe(200);
  });

  it.each([
    ['bad percent-encoding', '/v2/agent/%E0%A4%A/job/j1'],
    ['a slash encoded in an id', '/v2/agent/..%2Fadmin/job/j1'],
    ['an id of 200 characters', `/v2/agent/${'p'.repeat(200)}/job/j1`],
    ['a control character', '/v2/agent/p%00/job/j1'],
  ])('answers 400 with the error shape for %s in a path', async (_, p) => {
    await expectErrorShape(await fetch(gw.url + p), 400, 'invalid_argument');
  });

  it('answers 408 to a request whose body never arrives, instead of hanging', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(new URL(gw.url).port), '127.0.0.1');
      let data = '';
      const deadline = setTimeout(() => {
        socket.destroy();
        reject(new Error(`no answer within 10 s; got: ${data}`));
      }, 10_000);
      socket.on('data', (d) => (data += d.toString()));
      socket.on('close', () => {
        clearTimeout(deadline);
        resolve(data);
      });
      socket.on('error', () => undefined);
      socket.write(`POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"text":`);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  });
});
