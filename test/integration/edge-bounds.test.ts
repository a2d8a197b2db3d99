import http from 'node:http';
import http2 from 'node:http2';
import { maxInstructionMessageBytes } from '../../src/agent/validation';
import net from 'node:net';
import { Code, createClient } from '@connectrpc/connect';
import Fastify from 'fastify';
import { createConnectTransport, createGrpcTransport, Http2SessionManager } from '@connectrpc/connect-node';
import { closeDeps, createDeps } from '../../src/deps';
import { AgentService } from '../../src/gen/agent/v2/agent_pb';
import { requireDeclaredAuth } from '../../src/edge/declared-auth';
import { createLogger } from '../../src/log';
import { route, type Route } from '../../src/rest/router';
import { restRoutes } from '../../src/rest/routes';
import { agentMethodAuth } from '../../src/rpc/agent-handlers';
import { rpcServices, type RpcService } from '../../src/rpc/services';
import { build } from '../../src/server';
import { testConfig } from '../support/config';
import { startGateway, type RunningGateway } from '../support/gateway';

// The edge's input bounds over real sockets: message size on Connect and gRPC, slow HTTP/2 clients, and routes or RPC
// methods that do not say who may call them.

const idleMs = 500;
const requestMs = 1000;
let gw: RunningGateway;
let adminKey: string;

/** A gateway with one project and its admin key. */
async function gatewayWithProject(settings: Record<string, string> = {}): Promise<{ gw: RunningGateway; key: string }> {
  const started = await startGateway(settings);
  await started.deps.tenancy.createOrg('acme');
  await started.deps.tenancy.createProject({ _id: 'proj-a', orgId: 'acme', repository: 'acme/a', ref: 'main' });
  return { gw: started, key: (await started.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'proj-a' })).key };
}

// The default timeouts: a message refused at its prefix must be answered by its size, never by a timer that a loaded
// machine could reach first. The slow-client tests below run a gateway of their own with short timers.
beforeAll(async () => {
  ({ gw, key: adminKey } = await gatewayWithProject());
});
afterAll(() => gw.stop());

const sixteenMiB = 16 * 1024 * 1024;
const withKey = () => ({ headers: { authorization: `Bearer ${adminKey}` } });

/** Resolves with what the server sent on a raw HTTP/1.1 connection before it answered, or rejects after `ms`. */
function firstAnswer(port: number, head: string, bodyPart: Buffer, ms = 15_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    const deadline = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${ms} ms`));
    }, ms);
    socket.on('data', (d) => {
      data += d.toString();
      if (data.includes('\r\n\r\n')) {
        clearTimeout(deadline);
        socket.destroy();
        resolve(data);
      }
    });
    socket.on('error', () => undefined);
    socket.write(head);
    socket.write(bodyPart);
  });
}

describe('message size', () => {
  it('refuses a 16 MB message over Connect and gRPC with resource_exhausted, and stays ready', async () => {
    // A method without images keeps the 1 MiB bound (creates and follow-ups take images: see below).
    const jobId = 'x'.repeat(sixteenMiB);
    const agent = new http.Agent();
    const connect = createClient(AgentService, createConnectTransport({ baseUrl: gw.url, httpVersion: '1.1', nodeOptions: { agent } }));
    await expect(connect.getAgentJob({ projectId: 'proj-a', jobId }, withKey())).rejects.toMatchObject({ code: Code.ResourceExhausted });
    // Node's own HTTP/2 client refuses to queue 16 MB in one session by default (10 MB): let it, so the server decides.
    const session = new Http2SessionManager(gw.h2Url, undefined, { maxSessionMemory: 64 });
    const grpc = createClient(AgentService, createGrpcTransport({ baseUrl: gw.h2Url, sessionManager: session }));
    // The server answers at the 5-byte prefix and then stops the rest of the request, so the client reads the answer
    // instead of writing into a stream that is never read, and the connection serves the next call.
    await expect(grpc.getAgentJob({ projectId: 'proj-a', jobId }, withKey())).rejects.toMatchObject({ code: Code.ResourceExhausted });
    await expect(grpc.getAgentJob({ projectId: 'proj-a', jobId: 'job_none' }, withKey())).rejects.toMatchObject({ code: Code.NotFound });
    // Neither client sends the rest of its 16 MB: their connections are closed, not left to the gateway's shutdown.
    agent.destroy();
    session.abort();
    expect(await gw.deps.mongo.db.collection('jobs').countDocuments()).toBe(0);
    expect((await fetch(`${gw.url}/readyz`)).status).toBe(200);
  });

  it('answers from the declared length, while almost all of the message is still unsent', async () => {
    const port = Number(new URL(gw.url).port);
    const head = (method: string, length: number) =>
      [
        `POST /agent.v2.AgentService/${method} HTTP/1.1`,
        'host: x',
        'content-type: application/json',
        'connect-protocol-version: 1',
        `authorization: Bearer ${adminKey}`,
        `content-length: ${length}`,
        '',
        '',
      ].join('\r\n');
    const answer = await firstAnswer(port, head('GetAgentJob', sixteenMiB), Buffer.alloc(64 * 1024, 'x'));
    expect(answer).toMatch(/^HTTP\/1\.1 429 /); // Connect's status for resource_exhausted
    // A create takes five 10 MB images, and no more.
    const pastImages = await firstAnswer(port, head('CreateAgentJob', maxInstructionMessageBytes + 1), Buffer.alloc(64 * 1024, 'x'));
    expect(pastImages).toMatch(/^HTTP\/1\.1 429 /);

    // gRPC on h2c: the 5-byte envelope prefix announces 16 MiB; the answer comes before the message does.
    const session = http2.connect(gw.h2Url);
    try {
      const stream = session.request({ ':method': 'POST', ':path': '/agent.v2.AgentService/GetAgentJob', 'content-type': 'application/grpc', te: 'trailers', authorization: `Bearer ${adminKey}` });
      const prefix = Buffer.alloc(5);
      prefix.writeUInt32BE(sixteenMiB, 1);
      stream.write(Buffer.concat([prefix, Buffer.alloc(64 * 1024)]));
      const status = await new Promise<string | undefined>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('no gRPC status within 15 s')), 15_000);
        const pick = (h: http2.IncomingHttpHeaders) => {
          if (h['grpc-status'] === undefined) return;
          clearTimeout(t);
          resolve(String(h['grpc-status']));
        };
        stream.on('response', pick);
        stream.on('trailers', pick);
      });
      expect(status).toBe(String(Code.ResourceExhausted));
      // Then it asks the client to stop sending, without error (RFC 9113 section 8.1), rather than leave it to stall.
      if (!stream.closed) await new Promise((resolve) => stream.once('close', resolve));
      expect(stream.rstCode).toBe(http2.constants.NGHTTP2_NO_ERROR);
    } finally {
      session.destroy();
    }
    // The refused stream's unread bytes hold nothing open: once the client has gone, so has its connection.
    while ((await gw.openH2cConnections()) > 0) await new Promise((r) => setTimeout(r, 50));
    expect((await fetch(`${gw.url}/readyz`)).status).toBe(200);
  });
});

describe('deadlines', () => {
  it('refuses a unary call asking for more than 5 minutes, and lets a stream ask for longer', async () => {
    const client = createClient(AgentService, createConnectTransport({ baseUrl: gw.url, httpVersion: '1.1' }));
    await expect(client.getAgentJob({ projectId: 'proj-a', jobId: 'job_none' }, { ...withKey(), timeoutMs: 10 * 60_000 })).rejects.toMatchObject({ code: Code.InvalidArgument });
    await expect(client.getAgentJob({ projectId: 'proj-a', jobId: 'job_none' }, { ...withKey(), timeoutMs: 60_000 })).rejects.toMatchObject({ code: Code.NotFound });
    const watch = async () => {
      for await (const m of client.watchAgentJob({ projectId: 'proj-a', jobId: 'job_none' }, { ...withKey(), timeoutMs: 30 * 60_000 })) void m;
    };
    await expect(watch()).rejects.toMatchObject({ code: Code.NotFound }); // past the deadline check, to the job lookup
  });
});

describe('slow HTTP/2 clients', () => {
  let slow: RunningGateway;
  let slowKey: string;
  beforeAll(async () => {
    ({ gw: slow, key: slowKey } = await gatewayWithProject({ DOCENT_H2_IDLE_TIMEOUT_MS: String(idleMs), DOCENT_REQUEST_TIMEOUT_MS: String(requestMs) }));
  });
  afterAll(() => slow.stop());

  it('are told the connection limits in the server SETTINGS', async () => {
    const session = http2.connect(slow.h2Url);
    try {
      const settings = await new Promise<http2.Settings>((resolve) => session.once('remoteSettings', resolve));
      expect(settings).toMatchObject({ maxConcurrentStreams: 100, maxHeaderListSize: 16 * 1024 });
    } finally {
      session.destroy();
    }
  });

  const elapsed = (started: number) => performance.now() - started;
  // Nothing else would end these connections and streams (no client timeout, a dribble that goes on), so a bound well
  // above the timeout shows the timeout did it, and leaves room for a loaded machine.
  const slack = 5_000;

  it('closes a connection that opens and sends nothing, within the idle timeout', async () => {
    const started = performance.now();
    const session = http2.connect(slow.h2Url);
    session.on('error', () => undefined);
    await new Promise<void>((resolve) => session.once('close', resolve));
    expect(elapsed(started)).toBeLessThan(idleMs + slack);

    // Not even the HTTP/2 preface: a bare TCP connection is let go as well.
    const raw = net.connect(Number(new URL(slow.h2Url).port), '127.0.0.1');
    raw.on('error', () => undefined);
    raw.resume(); // read, so the end of the connection is seen
    const rawStarted = performance.now();
    await new Promise<void>((resolve) => raw.once('close', () => resolve()));
    expect(elapsed(rawStarted)).toBeLessThan(idleMs + slack);
  });

  it('resets a stream whose request dribbles in, within the request timeout, and keeps serving others', async () => {
    const session = http2.connect(slow.h2Url);
    session.on('error', () => undefined);
    try {
      const started = performance.now();
      const stream = session.request({ ':method': 'POST', ':path': '/agent.v2.AgentService/GetAgentJob', 'content-type': 'application/grpc', te: 'trailers', authorization: `Bearer ${slowKey}` });
      stream.on('error', () => undefined);
      const prefix = Buffer.alloc(5);
      prefix.writeUInt32BE(100, 1);
      stream.write(prefix);
      const dribble = setInterval(() => stream.write(Buffer.from('x')), 150);
      const ended = await new Promise<{ rstCode: number | undefined }>((resolve) => stream.once('close', () => resolve({ rstCode: stream.rstCode })));
      clearInterval(dribble);
      expect(ended.rstCode).toBe(http2.constants.NGHTTP2_CANCEL);
      expect(elapsed(started)).toBeGreaterThanOrEqual(requestMs - 100);
      expect(elapsed(started)).toBeLessThan(requestMs + slack);
    } finally {
      session.destroy();
    }
    const grpc = createClient(AgentService, createGrpcTransport({ baseUrl: slow.h2Url }));
    await expect(grpc.getAgentJob({ projectId: 'proj-a', jobId: 'job_none' }, { headers: { authorization: `Bearer ${slowKey}` } })).rejects.toMatchObject({ code: Code.NotFound });
  });
});

describe('authentication is declared', () => {
  const attempt = async (routes: (deps: ReturnType<typeof createDeps>) => Route[], services?: (deps: ReturnType<typeof createDeps>) => RpcService[]) => {
    const deps = createDeps(testConfig(), createLogger('silent', 'test'));
    try {
      const gateway = await build(deps, routes(deps), services?.(deps));
      await gateway.close();
    } finally {
      await closeDeps(deps);
    }
  };

  it('a route without an auth declaration stops build()', async () => {
    const undeclared = { ...route({ method: 'GET', path: '/v2/forgotten', summary: 'no auth', auth: 'none', handler: async () => ({ status: 200 }) }), auth: undefined } as unknown as Route;
    await expect(attempt((deps) => [...restRoutes(deps), undeclared])).rejects.toThrow(/GET \/v2\/forgotten declares no authentication/);
  });

  it('an RPC method without an auth declaration stops build()', async () => {
    const { watchAgentJob: _, ...partial } = agentMethodAuth;
    const services = (deps: ReturnType<typeof createDeps>) => rpcServices(deps).map((s) => (s.service.typeName === 'agent.v2.AgentService' ? { ...s, auth: partial } : s)) as RpcService[];
    await expect(attempt(restRoutes, services)).rejects.toThrow(/agent\.v2\.AgentService\.WatchAgentJob declares no authentication/);
  });

  it('a route added to the app by any other means, without config.auth, stops the app from starting', async () => {
    const app = Fastify();
    requireDeclaredAuth(app);
    app.get('/v2/side-door', async () => ({ ok: true }));
    app.get('/healthz', { config: { auth: 'none' } }, async () => ({ status: 'ok' }));
    await expect(app.ready()).rejects.toThrow('routes without an auth declaration (config.auth): GET /v2/side-door');
  });

  it('builds with every route and method declared', async () => {
    await expect(attempt(restRoutes)).resolves.toBeUndefined();
  });
});
