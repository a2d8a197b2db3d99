import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { OutboundRefused, type OutboundGuard } from './outbound';

export interface PinnedResponse {
  status: number;
  /** The URL that answered, after redirects. */
  url: URL;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface PinnedGetOptions {
  headers?: Record<string, string>;
  /** A body larger than this is refused, not read on. */
  maxBytes: number;
  timeoutMs: number;
  /** Redirects followed (each target is checked again); only to the same origin. */
  maxRedirects?: number;
  signal?: AbortSignal;
  /** Only the status and headers are wanted: the body is not read. */
  statusOnly?: boolean;
}

/** A body over the limit, or a redirect elsewhere: the page is skipped, with this message. */
export class FetchRefused extends Error {}

function getOnce(url: URL, address: string, opts: PinnedGetOptions): Promise<PinnedResponse> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.get(
      url,
      {
        headers: { 'user-agent': 'docent-crawler', ...opts.headers },
        // The address the guard checked, never a second DNS answer.
        lookup: (_host, o, cb) => {
          const family = isIP(address);
          if ((o as { all?: boolean }).all) (cb as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }]);
          else cb(null, address, family);
        },
        timeout: opts.timeoutMs,
        signal: opts.signal,
      },
      (res) => {
        if (opts.statusOnly) {
          res.destroy();
          return resolve({ status: res.statusCode ?? 0, url, headers: res.headers, body: Buffer.alloc(0) });
        }
        const declared = Number(res.headers['content-length'] ?? 0);
        if (declared > opts.maxBytes) {
          res.destroy();
          return reject(new FetchRefused(`${url} is larger than ${opts.maxBytes} bytes`));
        }
        const parts: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > opts.maxBytes) {
            res.destroy();
            reject(new FetchRefused(`${url} is larger than ${opts.maxBytes} bytes`));
          } else parts.push(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, url, headers: res.headers, body: Buffer.concat(parts) }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url.host} within ${opts.timeoutMs / 1000} s`)));
    req.on('error', reject);
  });
}

/** GETs a URL given by a project admin: its addresses checked by the guard and pinned, size and time bounded. */
export async function pinnedGet(guard: OutboundGuard, target: URL, opts: PinnedGetOptions): Promise<PinnedResponse> {
  let url = target;
  for (let hops = 0; ; hops++) {
    const [address] = await guard.check(url);
    if (!address) throw new OutboundRefused(`the host ${url.hostname} has no address`, { unresolved: true });
    const res = await getOnce(url, address, opts);
    const location = res.headers.location;
    if (res.status < 300 || res.status >= 400 || res.status === 304 || !location) return res;
    const next = new URL(location, url);
    if (next.origin !== target.origin) throw new FetchRefused(`${target} redirects to another site (${next.origin})`);
    if (hops >= (opts.maxRedirects ?? 3)) throw new FetchRefused(`${target} redirects more than ${opts.maxRedirects ?? 3} times`);
    url = next;
  }
}

/** An outside URL's HTTP status, or why it could not be had (activities/agent-job/link-tool.ts asks it). */
export type LinkStatus = { status: number } | { refused: string } | { unreachable: string };
