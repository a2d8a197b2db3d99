import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import type { z } from 'zod';
import { AppError, toRestError } from '../errors';
import type { Logger } from '../log';
import { parseInput } from '../validate';
import { corsAllowHeaders, corsExposeHeaders, isSameOrigin } from './cors';

// The same routes serve the HTTP/1.1 and the h2c listener, so only what both kinds of response share is used.
type NodeServerRequest = IncomingMessage | Http2ServerRequest;
/** What the HTTP/1.1 and HTTP/2 responses have in common, as docent's handlers use it. */
export interface NodeResponse {
  readonly headersSent: boolean;
  writeHead(status: number, headers: Record<string, string>): unknown;
  setHeader(name: string, value: string): unknown;
  end(body: string | Uint8Array): unknown;
}
interface NodeServerResponse extends NodeResponse {
  write(chunk: string | Uint8Array): boolean;
  destroy(): unknown;
  once(event: 'drain' | 'close', listener: () => void): unknown;
}

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

/**
 * Who may call a route from a browser. `public`: any origin (`*`). `origins`: only the origins the resolver returns
 * for the request's path parameters (see `projectOrigins` in cors.ts). Routes without `cors` send no CORS headers.
 */
export type CorsPolicy = { kind: 'public' } | { kind: 'origins'; resolve: (params: Record<string, string>) => Promise<readonly string[]> };

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
  /** Browser access; see CorsPolicy. */
  cors?: CorsPolicy;
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

// Path parameters are ids and domains; anything else cannot name a resource and is refused before any lookup.
export const pathParamShape = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

function pathParams(route: CompiledRoute, match: RegExpExecArray): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [i, name] of route.names.entries()) {
    let value: string;
    try {
      value = decodeURIComponent(match[i + 1]!);
    } catch {
      throw new AppError('invalid_argument', `path parameter ${name} is not valid percent-encoding`);
    }
    if (!pathParamShape.test(value)) throw new AppError('invalid_argument', `path parameter ${name} must be 1-128 letters, digits, _ . or -, starting with a letter or digit`);
    params[name] = value;
  }
  return params;
}

const isJsonType = (contentType: string | undefined) => /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i.test(contentType ?? '');

async function readJson(req: NodeServerRequest): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBodyBytes) throw new AppError('invalid_argument', `request body is larger than ${maxBodyBytes} bytes`);
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  // Only JSON is accepted, which also makes every cross-origin browser POST send a CORS preflight first.
  if (!isJsonType(req.headers['content-type'])) throw new AppError('invalid_argument', 'request body must be JSON, sent with content-type: application/json');
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

/** The Access-Control-Allow-Origin value for this origin, or undefined when the route's policy refuses it. */
async function allowedOrigin(policy: CorsPolicy, params: Record<string, string>, origin: string): Promise<string | undefined> {
  if (policy.kind === 'public') return '*';
  return (await policy.resolve(params)).includes(origin) ? origin : undefined;
}

const originRefused = (origin: string) =>
  new AppError('permission_denied', `origin ${origin.slice(0, 200)} may not call this endpoint: it is not among the project's allowed origins`);

/** Serves the REST paths; every failure leaves in the one error shape. */
export function createRestHandler(routes: Route[], log: Logger) {
  const compiled = routes.map(compile);
  const handler = async (req: NodeServerRequest, res: NodeServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    let corsHeaders: Record<string, string> = {};
    const reply = (r: RestResponse) => {
      send(res, { ...r, headers: { ...corsHeaders, ...r.headers } });
    };
    try {
      const candidates = compiled.flatMap((r) => {
        const m = r.pattern.exec(url.pathname);
        return m ? [{ r, m }] : [];
      });
      if (candidates.length === 0) throw new AppError('not_found', `no such path: ${url.pathname.slice(0, 200)}`);
      const allow = [...candidates.map((c) => c.r.method), 'OPTIONS'].join(', ');
      // The gateway's own pages (the playground) are not cross-origin callers.
      const origin = isSameOrigin(req.headers.origin ?? '', req.headers.host ?? req.headers[':authority']?.toString()) ? undefined : req.headers.origin;
      if (req.method === 'OPTIONS') {
        const target = candidates.find((c) => c.r.method === req.headers['access-control-request-method']);
        if (!origin || !target?.r.cors) return reply({ status: 204, headers: { allow } });
        corsHeaders = { vary: 'Origin' };
        const allowOrigin = await allowedOrigin(target.r.cors, pathParams(target.r, target.m), origin);
        if (!allowOrigin) throw originRefused(origin);
        return reply({
          status: 204,
          headers: {
            allow,
            'access-control-allow-origin': allowOrigin,
            'access-control-allow-methods': target.r.method,
            'access-control-allow-headers': corsAllowHeaders,
            'access-control-max-age': '600',
          },
        });
      }
      const hit = candidates.find((c) => c.r.method === req.method);
      if (!hit) return reply({ status: 405, headers: { allow }, body: { error: `method ${req.method} not allowed; use ${allow}`, code: 'unimplemented' } });
      const params = pathParams(hit.r, hit.m);
      if (origin && hit.r.cors) {
        corsHeaders = { vary: 'Origin' };
        const allowOrigin = await allowedOrigin(hit.r.cors, params, origin);
        if (!allowOrigin) throw originRefused(origin);
        corsHeaders = { vary: 'Origin', 'access-control-allow-origin': allowOrigin, 'access-control-expose-headers': corsExposeHeaders };
      }
      let body = req.method === 'POST' ? await readJson(req) : undefined;
      if (hit.r.body) body = parseInput(hit.r.body, body);
      const aborter = new AbortController();
      res.once('close', () => aborter.abort());
      const remoteAddress = req.socket?.remoteAddress ?? '';
      const out = await hit.r.handler({ params, query: url.searchParams, headers: req.headers, body, signal: aborter.signal, remoteAddress });
      if (out.stream) await pipe(res, { ...out, headers: { ...corsHeaders, ...out.headers }, stream: out.stream }, aborter.signal);
      else reply(out);
    } catch (err) {
      const e = toRestError(err);
      if (e.status >= 500) log[e.status === 500 ? 'error' : 'warn']({ err, path: url.pathname }, 'request failed');
      if (!res.headersSent) reply({ status: e.status, body: e.body, headers: e.headers });
      else res.destroy();
    }
  };
  /** The path template a request path falls under, for metrics and access logs (never the raw path: ids vary). */
  const routeOf = (pathname: string) => compiled.find((r) => r.pattern.test(pathname))?.path;
  return Object.assign(handler, { routeOf });
}
