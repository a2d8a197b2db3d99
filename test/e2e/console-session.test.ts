import { createHash, randomBytes } from 'node:crypto';
import { startGateway, type RunningGateway } from '../support/gateway';

// The console's session over HTTP, through the real gateway and MongoDB: a key is exchanged for an HttpOnly cookie
// that then stands for it on the public and operator APIs, only with the session's CSRF token and from the gateway's
// own origin for state-changing calls, only within the key's scope, and not at all once signed out.
let gw: RunningGateway;
let operator: string;
let acmeOperator: string;
let acmeAdmin: string;
let acmeAdminId: string;
let assistant: string;

interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

async function call(method: string, path: string, options: { cookie?: string; csrf?: string; origin?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: {
      ...(options.cookie && { cookie: options.cookie }),
      ...(options.csrf && { 'x-docent-csrf': options.csrf }),
      ...(options.origin && { origin: options.origin }),
      ...(options.body !== undefined && { 'content-type': 'application/json' }),
      ...options.headers,
    },
    ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text && res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : text, headers: res.headers };
}

/** Signs in with `key`; the cookie as a browser would send it back, and the session's CSRF token. */
async function signIn(key: string, headers: Record<string, string> = {}) {
  const r = await call('POST', '/console/session', { body: { key }, headers });
  expect(r.status).toBe(201);
  const setCookie = r.headers.get('set-cookie')!;
  return { cookie: setCookie.split(';')[0]!, setCookie, csrf: r.body.csrfToken as string, body: r.body };
}

beforeAll(async () => {
  gw = await startGateway();
  operator = (await gw.deps.keys.create({ kind: 'operator', orgId: '*' })).key;
  acmeOperator = (await gw.deps.keys.create({ kind: 'operator', orgId: 'acme' })).key;
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createOrg('globex');
  await gw.deps.tenancy.createProject({ _id: 'acme-site', orgId: 'acme', repository: 'acme/site', ref: 'main', domain: 'docs.acme-console.test', allowedOrigins: [] });
  await gw.deps.tenancy.createProject({ _id: 'globex-site', orgId: 'globex', repository: 'globex/site', ref: 'main', domain: 'docs.globex-console.test', allowedOrigins: [] });
  ({ key: acmeAdmin, id: acmeAdminId } = await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'acme-site' }));
  assistant = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain: 'docs.acme-console.test' })).key;
});
afterAll(() => gw?.stop());

describe('console sign-in', () => {
  it('sets an HttpOnly, SameSite=Strict cookie that is not the key, and stores only its hash', async () => {
    const s = await signIn(operator);
    expect(s.setCookie).toMatch(/^docent_console=docent_sess_[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    expect(s.setCookie).not.toContain(operator);
    expect(JSON.stringify(s.body)).not.toContain(operator);
    expect(s.body).toMatchObject({ kind: 'operator', keyId: expect.stringMatching(/^key_/), csrfToken: expect.any(String) });
    const token = s.cookie.split('=')[1]!;
    const stored = await gw.deps.mongo.db.collection('console_sessions').find({}).toArray();
    expect(JSON.stringify(stored)).not.toContain(token);
    expect(stored.map((d) => d._id)).toContain(createHash('sha256').update(token).digest('hex'));
    expect(await call('GET', '/console/session', { cookie: s.cookie })).toMatchObject({ status: 200, body: { kind: 'operator', csrfToken: s.csrf } });
  });

  it("is never Secure because a request's headers say TLS: the public address decides", async () => {
    expect((await signIn(operator, { 'x-forwarded-proto': 'https', origin: gw.url })).setCookie).not.toMatch(/Secure/);
  });

  it('refuses an assistant key (403), a wrong key (401) and a sign-in posted from another origin (403)', async () => {
    expect(await call('POST', '/console/session', { body: { key: assistant } })).toMatchObject({ status: 403, body: { code: 'permission_denied' } });
    expect(await call('POST', '/console/session', { body: { key: 'docent_op_notakey' } })).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
    expect(await call('POST', '/console/session', { body: { key: operator }, origin: 'https://evil.example' })).toMatchObject({ status: 403, body: { code: 'permission_denied' } });
  });

  it('does not take a session token in the Authorization header', async () => {
    const token = (await signIn(operator)).cookie.split('=')[1]!;
    expect(await call('GET', '/v2/admin/projects', { headers: { authorization: `Bearer ${token}` } })).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
  });
});

describe('the session cookie as a credential', () => {
  it('reads the operator API with the cookie alone', async () => {
    const s = await signIn(operator);
    const r = await call('GET', '/v2/admin/projects', { cookie: s.cookie });
    expect(r.status).toBe(200);
    expect(r.body.projects.map((p: { id: string }) => p.id)).toEqual(expect.arrayContaining(['acme-site', 'globex-site']));
  });

  it('refuses a state-changing call without the CSRF token, with a wrong one, or from another origin; takes it with the token from its own origin', async () => {
    const s = await signIn(operator);
    const body = { id: 'console-made', orgId: 'acme', repository: 'acme/made', ref: 'main', domain: 'made.acme-console.test' };
    const without = await call('POST', '/v2/admin/projects', { cookie: s.cookie, body });
    expect(without).toMatchObject({ status: 403, body: { code: 'permission_denied', error: expect.stringContaining('CSRF') } });
    expect(await call('POST', '/v2/admin/projects', { cookie: s.cookie, csrf: 'x'.repeat(43), body })).toMatchObject({ status: 403, body: { code: 'permission_denied' } });
    const crossOrigin = await call('POST', '/v2/admin/projects', { cookie: s.cookie, csrf: s.csrf, origin: 'https://evil.example', body });
    expect(crossOrigin).toMatchObject({ status: 403, body: { code: 'permission_denied', error: expect.stringContaining('another origin') } });
    const crossSite = await call('POST', '/v2/admin/projects', { cookie: s.cookie, csrf: s.csrf, headers: { 'sec-fetch-site': 'cross-site' }, body });
    expect(crossSite).toMatchObject({ status: 403, body: { code: 'permission_denied' } });
    expect(await gw.deps.tenancy.getProject('console-made')).toBeNull();
    // A job start on a public route is refused the same way.
    expect(await call('POST', '/v2/agent/acme-site/job', { cookie: s.cookie, body: { prompt: 'hello' } })).toMatchObject({ status: 403, body: { code: 'permission_denied' } });

    const made = await call('POST', '/v2/admin/projects', { cookie: s.cookie, csrf: s.csrf, origin: new URL(gw.url).origin, body });
    expect(made).toMatchObject({ status: 201, body: { id: 'console-made' } });
  });

  it("a project admin key's session sees its project and nothing of another, on the operator and the public APIs", async () => {
    const s = await signIn(acmeAdmin);
    expect(s.body).toMatchObject({ kind: 'admin', projectId: 'acme-site' });
    expect((await call('GET', '/v2/admin/projects/acme-site', { cookie: s.cookie })).status).toBe(200);
    expect((await call('GET', '/v2/agent/acme-site/jobs', { cookie: s.cookie })).status).toBe(200);
    expect(await call('GET', '/v2/admin/projects/globex-site', { cookie: s.cookie })).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await call('GET', '/v2/admin/projects/globex-site/keys', { cookie: s.cookie })).toMatchObject({ status: 404 });
    expect(await call('GET', '/v2/agent/globex-site/jobs', { cookie: s.cookie })).toMatchObject({ status: 404 });
    expect(await call('GET', '/v1/analytics/globex-site/searches', { cookie: s.cookie })).toMatchObject({ status: 404 });
    expect(await call('GET', '/v2/admin/projects', { cookie: s.cookie })).toMatchObject({ status: 403 });
    expect(await call('POST', '/v2/admin/projects/globex-site/keys', { cookie: s.cookie, csrf: s.csrf, body: { kind: 'admin' } })).toMatchObject({ status: 404 });
  });

  it("an organization's operator session acts on its own organization's projects only", async () => {
    const s = await signIn(acmeOperator);
    expect((await call('GET', '/v2/agent/acme-site/jobs', { cookie: s.cookie })).status).toBe(200);
    expect(await call('GET', '/v2/agent/globex-site/jobs', { cookie: s.cookie })).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await call('GET', '/v2/admin/projects/globex-site', { cookie: s.cookie })).toMatchObject({ status: 404 });
    const listed = await call('GET', '/v2/admin/projects', { cookie: s.cookie });
    expect(listed.body.projects.map((p: { orgId: string }) => p.orgId)).not.toContain('globex');
  });

  it("an operator session's large job request (images past 1 MiB) is read as the project's admin, like a small one, as is one with the key", async () => {
    const s = await signIn(operator);
    const images = [{ mimeType: 'image/png', data: 'A'.repeat(1_200_000) }];
    const r = await call('POST', '/v2/agent/acme-site/job', { cookie: s.cookie, csrf: s.csrf, body: { prompt: 'look at this', images } });
    expect(r.body.code).not.toBe('permission_denied');
    expect(r).toMatchObject({ status: 400, body: { code: 'failed_precondition' } });
    // The operator key itself in the Authorization header is read the same way: the cookie grants nothing its key does not.
    const byKey = await call('POST', '/v2/agent/acme-site/job', { headers: { authorization: `Bearer ${operator}` }, body: { prompt: 'look at this', images } });
    expect(byKey).toMatchObject({ status: 400, body: { code: 'failed_precondition' } });
    expect(await call('GET', '/v2/agent/globex-site/jobs', { headers: { authorization: `Bearer ${acmeOperator}` } })).toMatchObject({ status: 404, body: { code: 'not_found' } });
  });

  it('signing out ends the session on the server: the old cookie is refused afterwards', async () => {
    const s = await signIn(operator);
    expect(await call('DELETE', '/console/session', { cookie: s.cookie })).toMatchObject({ status: 403 });
    const out = await call('DELETE', '/console/session', { cookie: s.cookie, csrf: s.csrf });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^docent_console=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0/);
    expect(await call('GET', '/console/session', { cookie: s.cookie })).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
    expect(await call('GET', '/v2/admin/projects', { cookie: s.cookie })).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
  });

  it('a session ends with its key: revoking the key refuses the cookie', async () => {
    const { key, id } = await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'acme-site' });
    const s = await signIn(key);
    expect((await call('GET', '/v2/agent/acme-site/jobs', { cookie: s.cookie })).status).toBe(200);
    await gw.deps.keys.revoke(id);
    expect(await call('GET', '/v2/agent/acme-site/jobs', { cookie: s.cookie })).toMatchObject({ status: 401 });
    expect(acmeAdminId).not.toBe(id);
  });

  it('writes sign-in and sign-out to the audit log', async () => {
    const s = await signIn(operator);
    const entries = (await call('GET', '/v2/admin/audit?limit=200', { cookie: s.cookie })).body.entries as Array<{ route: string; method: string; status: number }>;
    expect(entries).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ route: '/console/session', method: 'POST', status: 201 }),
        expect.objectContaining({ route: '/console/session', method: 'DELETE', status: 204 }),
      ]),
    );
  });
});

describe('behind an https public address (DOCENT_PUBLIC_URL), with a proxy that names the client', () => {
  let tls: RunningGateway;
  let tlsOperator: string;
  const post = (key: string, address: string) =>
    fetch(`${tls.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': address }, body: JSON.stringify({ key }) });
  beforeAll(async () => {
    tls = await startGateway({ DOCENT_PUBLIC_URL: 'https://docs.example.org', DOCENT_TRUSTED_PROXY: '127.0.0.1' });
    tlsOperator = (await tls.deps.keys.create({ kind: 'operator', orgId: '*' })).key;
  });
  afterAll(() => tls?.stop());

  it('the cookie is __Host- and Secure, and a cookie without the prefix is not taken', async () => {
    const r = await post(tlsOperator, '198.51.100.1');
    expect(r.status).toBe(201);
    const setCookie = r.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^__Host-docent_console=docent_sess_[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/);
    const [pair] = setCookie.split(';');
    expect((await fetch(`${tls.url}/console/session`, { headers: { cookie: pair! } })).status).toBe(200);
    // The same token under the plain name, as a sibling host could set it, is no session here.
    expect((await fetch(`${tls.url}/console/session`, { headers: { cookie: pair!.replace('__Host-', '') } })).status).toBe(401);
  });

  it('thirty bad sign-ins from one address: 401 until the limit, then 429 with Retry-After, one audit entry for the window; the right key waits too', async () => {
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 30; i++) {
      const r = await post(`docent_op_${randomBytes(32).toString('base64url')}`, '203.0.113.66');
      statuses.push(r.status);
      if (r.status === 429) retryAfter = r.headers.get('retry-after');
    }
    expect(statuses.slice(0, 10)).toEqual(new Array(10).fill(401));
    expect(statuses.slice(10)).toEqual(new Array(20).fill(429));
    expect(Number(retryAfter)).toBeGreaterThan(0);
    expect(await post(tlsOperator, '203.0.113.66')).toMatchObject({ status: 429 });
    // Another address signs in as before.
    expect((await post(tlsOperator, '203.0.113.67')).status).toBe(201);
    const audit = (await (await fetch(`${tls.url}/v2/admin/audit?limit=200`, { headers: { authorization: `Bearer ${tlsOperator}` } })).json()) as { entries: Array<{ route: string; status: number }> };
    const refused = audit.entries.filter((e) => e.route === '/console/session' && e.status === 401);
    expect(refused).toHaveLength(1);
  });
});

describe('the playground', () => {
  it('is served with its own content security policy: no framing, only its own scripts', async () => {
    const r = await fetch(`${gw.url}/playground/`);
    expect(r.status).toBe(200);
    const csp = r.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(r.headers.get('x-frame-options')).toBe('DENY');
  });
});

describe('the console page', () => {
  it('is served at /console/ with a strict content security policy', async () => {
    const r = await fetch(`${gw.url}/console/`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await r.text()).toContain('docent console');
    expect((await fetch(`${gw.url}/console/src/main.js`)).headers.get('content-type')).toMatch(/javascript/);
  });
});
