import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';

// The same routes serve the HTTP/1.1 and the h2c listener, so only what both kinds of response share is used.
type NodeServerRequest = IncomingMessage | Http2ServerRequest;
interface NodeServerResponse {
  readonly headersSent: boolean;
  writeHead(status: number, headers: Record<string, string>): unknown;
  end(body: string): unknown;
  destroy(): unknown;
}
import { AppError, toRestError } from '../errors';
import type { Logger } from '../log';

export interface RestRequest {
  params: Record<string, string>;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface RestResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface Route {
  method: 'GET' | 'POST';
  /** A path with `{name}` segments, as DESIGN.md writes them. */
  path: string;
  handler: (req: RestRequest) => Promise<RestResponse>;
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
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      send(res, await hit.r.handler({ params, query: url.searchParams, headers: req.headers, body }));
    } catch (err) {
      const e = toRestError(err);
      if (e.status >= 500) log[e.status === 500 ? 'error' : 'warn']({ err, path: url.pathname }, 'request failed');
      const headers = e.body.retryAfterSeconds !== undefined ? { 'retry-after': String(e.body.retryAfterSeconds) } : undefined;
      if (!res.headersSent) send(res, { status: e.status, body: e.body, headers });
      else res.destroy();
    }
  };
}
