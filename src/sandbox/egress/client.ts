// The worker's own requests on a turn's behalf (the agent's check_links), sent through that turn's egress proxy like
// the sandbox's: the proxy's policy decides, and its recorder makes each connection an egress event.
import http from 'node:http';
import type net from 'node:net';
import tls from 'node:tls';
import { isIP } from 'node:net';

/** The proxy would not open the connection: its policy's reason, or why the host could not be reached. */
export class EgressRefused extends Error {}

export interface ProxiedAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
}

const REFUSAL_BYTES = 2048;

/** Opens a tunnel to `host:port` through the proxy on `socketPath` (CONNECT), or throws EgressRefused with its reason. */
function tunnel(socketPath: string, host: string, port: number, signal: AbortSignal): Promise<net.Socket> {
  const authority = `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, method: 'CONNECT', path: authority, headers: { host: authority }, signal, agent: false });
    req.once('connect', (res, socket, head) => {
      if (res.statusCode === 200) {
        if (head.length) socket.unshift(head);
        return resolve(socket);
      }
      // The proxy's refusal is a short text body ("docent egress proxy: <reason>"), then it closes.
      const parts: Buffer[] = [head];
      let size = head.length;
      socket.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= REFUSAL_BYTES) parts.push(c);
      });
      socket.once('close', () => {
        const text = Buffer.concat(parts)
          .toString('utf8')
          .trim()
          .replace(/^docent egress proxy: /, '');
        reject(new EgressRefused(text || `the egress proxy answered ${res.statusCode}`));
      });
      socket.on('error', () => undefined);
    });
    req.once('error', reject);
    req.end();
  });
}

/**
 * GETs `url` through the turn's egress proxy and returns its status and headers, the body unread. The tunnel is
 * always CONNECT (plain http too), so a refusal by the proxy is never mistaken for the site's own 403. Redirects are
 * the caller's: each target is a new request the proxy checks again.
 */
export async function getThroughEgress(socketPath: string, url: URL, opts: { timeoutMs: number; headers?: Record<string, string> }): Promise<ProxiedAnswer> {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new EgressRefused(`${url.protocol} URLs are not asked`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const signal = AbortSignal.timeout(opts.timeoutMs);
  let raw: net.Socket | undefined;
  try {
    raw = await tunnel(socketPath, host, port, signal);
    const socket = url.protocol === 'https:' ? tls.connect({ socket: raw, servername: isIP(host) ? undefined : host, ALPNProtocols: ['http/1.1'] }) : raw;
    return await new Promise<ProxiedAnswer>((resolve, reject) => {
      const headers = { host: url.host, ...opts.headers };
      const req = http.request({ method: 'GET', path: `${url.pathname}${url.search}`, headers, setHost: false, createConnection: () => socket, signal }, (res) => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers });
        res.destroy();
      });
      req.once('error', reject);
      req.end();
    });
  } catch (err) {
    if (signal.aborted) throw new Error(`no answer from ${url.host} within ${opts.timeoutMs / 1000} s`);
    throw err;
  } finally {
    raw?.destroy();
  }
}
