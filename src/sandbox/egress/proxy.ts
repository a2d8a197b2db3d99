// The worker-side egress proxy: HTTP CONNECT and plain absolute-URI HTTP, on a Unix socket bound into a sandbox.
import { chmod, rm } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import type { EgressPolicy } from './policy';

/** One connection the proxy allowed or refused, once it is over. */
export interface EgressRecord {
  host: string;
  port: number;
  method: string;
  allowed: boolean;
  reason?: string;
  /** The address it connected to (the one the policy checked). */
  address?: string;
  bytesOut: number;
  bytesIn: number;
}

export interface EgressProxy {
  socketPath: string;
  /** Stops listening and cuts every open connection. */
  close(): Promise<void>;
}

const CONNECT_TIMEOUT_MS = 10_000;
const HOP_BY_HOP = new Set(['connection', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'keep-alive', 'upgrade', 'te', 'trailer']);

/** Opens a TCP connection to the first of `addresses` that answers. */
async function connectFirst(addresses: string[], port: number): Promise<net.Socket> {
  let last: Error = new Error('no address');
  for (const address of addresses) {
    try {
      return await new Promise<net.Socket>((resolve, reject) => {
        const s = net.connect({ host: address, port, timeout: CONNECT_TIMEOUT_MS });
        s.once('connect', () => {
          s.setTimeout(0);
          resolve(s);
        });
        s.once('timeout', () => s.destroy(new Error(`connect to ${address}:${port} timed out`)));
        s.once('error', reject);
      });
    } catch (err) {
      last = err as Error;
    }
  }
  throw last;
}

function refusalText(reason: string): string {
  return `docent egress proxy: ${reason}\n`;
}

function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(authority);
  return m ? { host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]) } : undefined;
}

/**
 * Why the request's Host header does not name the URL's host (port-normalised, case-insensitive), or undefined when
 * it does or is absent. A server behind a shared address (a CDN) routes by Host, so a different one would reach a
 * site the policy never checked.
 */
export function hostHeaderMismatch(req: http.IncomingMessage, url: URL): string | undefined {
  const sent: string[] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === 'host') sent.push(req.rawHeaders[i + 1]!);
  if (sent.length === 0) return undefined;
  if (sent.length > 1) return 'the request has more than one Host header';
  let named: string | undefined;
  try {
    // No userinfo, path or query smuggled in: `new URL` would read `a@b` as host b.
    named = /^[^@/?#\\\s]+$/.test(sent[0]!) ? new URL(`http://${sent[0]}`).host : undefined;
  } catch {
    named = undefined;
  }
  return named === url.host ? undefined : `the Host header (${JSON.stringify(sent[0]!.slice(0, 100))}) is not the URL's host (${url.host}); the proxy forwards only the host it checked`;
}

/** Listens on `socketPath` (mode 0666: the sandbox's uid connects; its directory guards it) until close(). */
export async function startEgressProxy(socketPath: string, policy: EgressPolicy, onRecord: (r: EgressRecord) => void): Promise<EgressProxy> {
  const open = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    open.add(s);
    s.once('close', () => open.delete(s));
  };
  const server = http.createServer();
  server.on('connection', track);
  server.on('clientError', (_err, socket) => socket.destroy());

  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const target = parseAuthority(req.url ?? '');
    const base = { host: target?.host ?? String(req.url).slice(0, 200), port: target?.port ?? 0, method: 'CONNECT' };
    client.on('error', () => undefined);
    const refuse = (status: number, reason: string) => {
      onRecord({ ...base, allowed: false, reason, bytesOut: 0, bytesIn: 0 });
      const body = refusalText(reason);
      client.end(`HTTP/1.1 ${status} ${status === 403 ? 'Forbidden' : 'Bad Gateway'}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
    };
    if (!target) return refuse(403, `${base.host} is not host:port`);
    (async () => {
      const decision = await policy.decide(target.host, target.port);
      if (!decision.allowed) return refuse(403, decision.reason);
      let upstream: net.Socket;
      try {
        upstream = await connectFirst(decision.addresses, target.port);
      } catch (err) {
        return refuse(502, `cannot connect to ${target.host}:${target.port}: ${(err as Error).message}`);
      }
      track(upstream);
      let bytesOut = head.length;
      let bytesIn = 0;
      const address = upstream.remoteAddress;
      client.on('data', (c: Buffer) => (bytesOut += c.length));
      upstream.on('data', (c: Buffer) => (bytesIn += c.length));
      upstream.on('error', () => undefined);
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        client.destroy();
        upstream.destroy();
        onRecord({ ...base, allowed: true, address, bytesOut, bytesIn });
      };
      client.once('close', finish);
      upstream.once('close', finish);
      // The client may have gone while the name was resolved: its 'close' has been and gone.
      if (client.destroyed) return finish();
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      client.pipe(upstream);
      upstream.pipe(client);
    })().catch(() => client.destroy());
  });

  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    let url: URL | undefined;
    try {
      url = new URL(req.url ?? '');
    } catch {
      url = undefined;
    }
    const port = url ? Number(url.port || 80) : 0;
    const base = { host: url?.hostname.replace(/^\[|\]$/g, '') ?? String(req.url).slice(0, 200), port, method: req.method ?? 'GET' };
    const refuse = (status: number, reason: string) => {
      onRecord({ ...base, allowed: false, reason, bytesOut: 0, bytesIn: 0 });
      req.resume();
      if (!res.headersSent) res.writeHead(status, { 'content-type': 'text/plain', connection: 'close' });
      res.end(refusalText(reason));
    };
    if (url?.protocol !== 'http:') return refuse(403, 'only absolute http:// URLs (or CONNECT for https) go through this proxy');
    const mismatch = hostHeaderMismatch(req, url);
    if (mismatch) return refuse(403, mismatch);
    req.on('error', () => res.destroy());
    (async () => {
      const decision = await policy.decide(base.host, port);
      if (!decision.allowed) return refuse(403, decision.reason);
      let socket: net.Socket;
      try {
        socket = await connectFirst(decision.addresses, port);
      } catch (err) {
        return refuse(502, `cannot connect to ${base.host}:${port}: ${(err as Error).message}`);
      }
      track(socket);
      const address = socket.remoteAddress;
      const headers: http.OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) headers[k] = v;
      // An HTTP/1.0 client may send none; the upstream then hears the host that was checked.
      headers.host ??= url.host;
      let bytesOut = 0;
      let bytesIn = 0;
      let recorded = false;
      const record = () => {
        if (recorded) return;
        recorded = true;
        onRecord({ ...base, allowed: true, address, bytesOut, bytesIn });
      };
      const upstream = http.request({ method: req.method, path: `${url.pathname}${url.search}`, headers, setHost: false, createConnection: () => socket });
      req.on('data', (c: Buffer) => (bytesOut += c.length));
      upstream.on('response', (up) => {
        const out: http.OutgoingHttpHeaders = {};
        for (const [k, v] of Object.entries(up.headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) out[k] = v;
        res.writeHead(up.statusCode ?? 502, up.statusMessage, out);
        up.on('data', (c: Buffer) => (bytesIn += c.length));
        up.on('error', () => res.destroy());
        up.pipe(res);
        up.once('close', record);
      });
      upstream.on('error', (err) => {
        record();
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(refusalText(`${base.host}:${port}: ${err.message}`));
      });
      res.once('close', () => {
        upstream.destroy();
        record();
      });
      req.pipe(upstream);
    })().catch(() => res.destroy());
  });

  await rm(socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  await chmod(socketPath, 0o666);
  return {
    socketPath,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of open) s.destroy();
      await closed;
      await rm(socketPath, { force: true });
    },
  };
}
