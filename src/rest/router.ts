import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';

// The same routes serve the HTTP/1.1 and the h2c listener, so only what both kinds of response share is used.
type NodeServerRequest = IncomingMessage | Http2ServerRequest;
interface NodeServerResponse {
  readonly headersSent: boolean;
  writeHead(status: number, headers: Record<string, string>): unknown;
  write(chunk: string | Uint8Array): boolean;
  end(body: string): unknown;
  destroy(): unknown;
  once(event: 'drain' | 'close', listener: () => void): unknown;
}
import { z } from 'zod';
import { AppError, toRestError } from '../errors';
import { parseInput } from '../validate';
import type { Logger } from '../log';

export interface RestRequest<B = unknown> {
  params: Record<string, string>;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** The body, already checked against the route's schema. */
  body: B;
  /** Aborted when the client goes away, so streaming work can stop. */
  signal: AbortSignal;
  /** The caller's address as the socket sees it. */
  remoteAddress: string;
}

export interface RestResponse {
  status: number;
  /** A JSON body. */
  body?: unknown;
  /** A streamed body (SSE, AI SDK data stream); its encoder reports late errors inside the stream. */
  stream?: AsyncIterable<string | Uint8Array>;
  headers?: Record<string, string>;
}

export interface Route<B = unknown> {
  method: 'GET' | 'POST';
  /** A path with `{name}` segments, as DESIGN.md writes them. */
  path: string;
  /** One line for /openapi.json. */
  summary: string;
  /** The key the route needs; /openapi.json documents it. */
  auth: 'admin' | 'assistant' | 'none';
  /** The JSON body's schema: the router validates with it and /openapi.json describes it. */
  body?: z.ZodType<B>;
  handler: (req: RestRequest<B>) => Promise<RestResponse>;
}

/** Declares a route so that its handler's body type follows from its schema. */
export function route<B = undefined>(r: Route<B>): Route {
  return r as Route;
}


const maxBodyBytes = 1024 * 1024;

interface CompiledRoute extends Route {
  pattern: RegExp;
  names: string[];
}

function compile(route: Route): CompiledRoute {
  const names: string[] = [];
  const source = route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, (_, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  return { ...route, pattern: new RegExp(`^${source}$`), names };
}

async function readJson(req: NodeServerRequest): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBodyBytes) throw new AppError('invalid_argument', `request body is larger than ${maxBodyBytes} bytes`);
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new AppError('invalid_argument', 'request body is not valid JSON');
  }
}

export function send(res: NodeServerResponse, r: RestResponse): void {
  const payload = r.body === undefined ? '' : JSON.stringify(r.body);
  res.writeHead(r.status, { ...(payload ? { 'content-type': 'application/json' } : {}), ...r.headers });
  res.end(payload);
}

/** Writes a streamed body chunk by chunk, waiting for the socket to drain so a slow reader slows the producer. */
async function pipe(res: NodeServerResponse, r: RestResponse & { stream: AsyncIterable<string | Uint8Array> }, signal: AbortSignal) {
  res.writeHead(r.status, { 'cache-control': 'no-cache', ...r.headers });
  for await (const chunk of r.stream) {
    if (signal.aborted) break;
    if (!res.write(chunk)) await new Promise<void>((resolve) => { res.once('drain', resolve); res.once('close', resolve); });
  }
  res.end('');
}

/** Serves the REST paths; every failure leaves in the one error shape. */
export function createRestHandler(routes: Route[], log: Logger) {
  const compiled = routes.map(compile);
  return async (req: NodeServerRequest, res: NodeServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    try {
      const candidates = compiled.map((r) => ({ r, m: r.pattern.exec(url.pathname) })).filter((c) => c.m);
      if (candidates.length === 0) throw new AppError('not_found', `no such path: ${url.pathname}`);
      const hit = candidates.find((c) => c.r.method === req.method);
      if (!hit) {
        const allow = candidates.map((c) => c.r.method).join(', ');
        return send(res, { status: 405, headers: { allow }, body: { error: `method ${req.method} not allowed; use ${allow}`, code: 'unimplemented' } });
      }
      const params = Object.fromEntries(hit.r.names.map((n, i) => [n, decodeURIComponent(hit.m![i + 1]!)]));
      let body = req.method === 'POST' ? await readJson(req) : undefined;
      if (hit.r.body) body = parseInput(hit.r.body, body);
      const aborter = new AbortController();
      res.once('close', () => aborter.abort());
      const remoteAddress = req.socket?.remoteAddress ?? '';
      const out = await hit.r.handler({ params, query: url.searchParams, headers: req.headers, body, signal: aborter.signal, remoteAddress });
      if (out.stream) await pipe(res, { ...out, stream: out.stream }, aborter.signal);
      else send(res, out);
    } catch (err) {
      const e = toRestError(err);
      if (e.status >= 500) log[e.status === 500 ? 'error' : 'warn']({ err, path: url.pathname }, 'request failed');
      const headers = e.body.retryAfterSeconds !== undefined ? { 'retry-after': String(e.body.retryAfterSeconds) } : undefined;
      if (!res.headersSent) send(res, { status: e.status, body: e.body, headers });
      else res.destroy();
    }
  };
}
