import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import { z } from 'zod';
import type { Caller, KeyKind } from '../auth/api-keys';
import { AppError } from '../errors';
import { maxBodyBytes } from '../edge/errors';
import { isRouteAuth, type Authenticate, type AuthenticateOperator, type OperatorChecks, type RequestUse, type RouteAuth } from '../edge/route-auth';
import { errorBody } from './response-schemas';

export interface RestRequest<B = unknown, A extends RouteAuth = RouteAuth> {
  method: string;
  params: Record<string, string>;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** The body, already checked against the route's schema. */
  body: B;
  /** Aborted when the client goes away, so streaming work can stop. */
  signal: AbortSignal;
  /** The caller's address as the socket sees it. */
  remoteAddress: string;
  /** The body as sent, unparsed: only on routes that declare `rawBody` (a signature covers these exact bytes). */
  rawBody?: string;
  /** The key that passed the route's `auth`; a route with `auth: 'none'` has none. */
  caller: A extends KeyKind ? Caller : undefined;
}

export interface RestResponse {
  status: number;
  /** A JSON body, encoded through the route's response schema for this status. */
  body?: unknown;
  /** A streamed body (SSE, AI SDK data stream); its encoder reports late errors inside the stream. */
  stream?: AsyncIterable<string | Uint8Array>;
  headers?: Record<string, string>;
}

/**
 * Who may call a route from a browser. `public`: any origin (`*`). `origins`: only origins `allows` accepts for the
 * request's path parameters (see `projectOrigins` in src/edge/cors.ts). Routes without `cors` send no CORS headers.
 */
export type CorsPolicy = { kind: 'public' } | { kind: 'origins'; allows: (origin: string, params: Record<string, string>) => Promise<boolean> };

/** A response a route documents: a JSON body by its schema, or a stream by its content type. */
export type ResponseDoc = { description: string; json: z.ZodType } | { description: string; streamed: string };

export interface Route<B = unknown, A extends RouteAuth = RouteAuth> {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** A path with `{name}` segments, as the public API writes them. */
  path: string;
  /** One line for /openapi.json. */
  summary: string;
  auth: A;
  /** The JSON body's schema: requests are validated with it and /openapi.json describes it. */
  body?: z.ZodType<B>;
  /** Success responses by status; errors always have the one error shape. */
  responses?: Record<number, ResponseDoc>;
  /** Browser access; see CorsPolicy. */
  cors?: CorsPolicy;
  /** A body limit above the gateway's 1 MiB, for the routes that take images; such a body is read only for a valid key. */
  bodyLimit?: number;
  /** The JSON body reaches the handler unparsed, as `rawBody` (no `body` schema then). */
  rawBody?: boolean;
  /** What /openapi.json lists as the route's credentials when its handler checks them itself (`auth: 'none'`). */
  security?: Array<Record<string, string[]>>;
  /** Runs before every answer of the route is sent: its handler's, an error's, and the 400 of a body the schema refused. */
  onAnswered?: (req: RestRequest, status: number) => Promise<void>;
  handler: (req: RestRequest<B, A>) => Promise<RestResponse>;
}

/** Declares a route so that its handler's body and caller types follow from its schema and its `auth`. */
export function route<B = undefined, A extends RouteAuth = RouteAuth>(r: Route<B, A>): Route {
  return r as unknown as Route;
}

const noOperatorToken: AuthenticateOperator = async () => {
  throw new AppError('unauthenticated', 'no operator token is configured');
};
const noOperatorTokens: OperatorChecks = { operator: noOperatorToken, metrics: noOperatorToken };

/** What CORS needs to know about a route (read by src/edge/cors.ts from the route's config). */
export interface BrowserAccess {
  policy: CorsPolicy;
  /** Access-Control-Allow-Methods of a preflight. */
  methods: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the route's declared `auth` before its handler runs. */
    caller?: Caller;
    /** The unparsed JSON body of a route that declares `rawBody`. */
    rawBody?: string;
  }
  interface FastifyContextConfig {
    /** Every route declares who may call it; 'rpc' means each Connect method declares its own (rpc/services.ts). */
    auth?: RouteAuth | 'rpc';
    browserAccess?: BrowserAccess;
    /** On a path's OPTIONS route: the browser access of each method a preflight may ask for. */
    preflightOf?: Record<string, BrowserAccess>;
    /** Listed in /openapi.json (the declared REST routes only). */
    documented?: boolean;
    /** The JSON body is kept as sent (src/edge/json-bodies.ts). */
    rawBody?: boolean;
  }
}

// Path parameters are ids and domains; anything else cannot name a resource and is refused before any lookup.
export const pathParam = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/, 'must be 1-128 letters, digits, _ . or -, starting with a letter or digit');

const paramPattern = /\{(\w+)\}/g;
const fastifyPath = (path: string) => path.replace(paramPattern, ':$1');
const paramNames = (path: string) => [...path.matchAll(paramPattern)].map((m) => m[1]!);

const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: errorBody } } });
const undocumented: Record<number, ResponseDoc> = { 200: { description: 'Success', json: z.unknown() } };

function responseSchemas(r: Route) {
  const out: Record<string, unknown> = {};
  for (const [status, doc] of Object.entries(r.responses ?? undocumented)) {
    out[status] =
      'json' in doc ? { description: doc.description, content: { 'application/json': { schema: doc.json } } } : { description: doc.description, content: { [doc.streamed]: { schema: z.string() } } };
  }
  out['4xx'] = errorResponse('The request was refused; the body says why');
  out['5xx'] = errorResponse('docent or a service it depends on failed');
  return out;
}

const operationId = (r: Route) => r.method.toLowerCase() + r.path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase());
const securityOf: Record<RouteAuth, Array<Record<string, string[]>>> = {
  admin: [{ adminKey: [] }],
  assistant: [{ assistantKey: [] }],
  none: [],
  operator: [{ operatorToken: [] }],
  metrics: [{ metricsToken: [] }],
};

function schemaOf(r: Route): FastifySchema {
  const names = paramNames(r.path);
  return {
    summary: r.summary,
    operationId: operationId(r),
    // A project's admin route also takes an operator key that covers the project (src/edge/app.ts).
    security: r.security ?? (r.auth === 'admin' && names.includes('projectId') ? [...securityOf.admin, { operatorKey: [] }] : securityOf[r.auth]),
    ...(names.length ? { params: z.object(Object.fromEntries(names.map((n) => [n, pathParam]))) } : {}),
    ...(r.body ? { body: r.body } : {}),
    response: responseSchemas(r),
  } as FastifySchema;
}

function restRequestOf(req: FastifyRequest, signal: AbortSignal): RestRequest {
  const query = req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '';
  return {
    method: req.method,
    params: (req.params ?? {}) as Record<string, string>,
    query: new URLSearchParams(query),
    headers: req.headers,
    body: req.body,
    signal,
    remoteAddress: req.socket.remoteAddress ?? '',
    rawBody: req.rawBody,
    caller: req.caller as RestRequest['caller'],
  };
}

function handlerOf(r: Route) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const aborter = new AbortController();
    reply.raw.once('close', () => aborter.abort());
    const out = await r.handler(restRequestOf(req, aborter.signal));
    reply.code(out.status);
    if (out.headers) reply.headers(out.headers);
    if (!out.stream) return reply.send(out.body);
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-cache');
    return reply.send(Readable.from(out.stream));
  };
}

/** How a request uses its key: where it comes from, and whether it may change something (anything but GET). */
const requestUseOf = (req: FastifyRequest): RequestUse => ({ remoteAddress: req.socket.remoteAddress ?? '', forwardedFor: req.headers['x-forwarded-for'], writes: req.method !== 'GET' });

/** The project a route's path names, if it names one: an operator key covering it may act as its admin. */
const projectIdOf = (req: FastifyRequest) => (req.params as Record<string, string> | undefined)?.projectId;

/**
 * On a route that takes large bodies, a body past the gateway's usual limit (or of unknown length) is read only once
 * the key is known good: nobody without one can make the gateway read and parse megabytes.
 */
function keyBeforeLargeBody(authenticate: Authenticate, kind: 'admin' | 'assistant') {
  return async (req: FastifyRequest) => {
    const length = Number(req.headers['content-length'] ?? Number.POSITIVE_INFINITY);
    if (length > maxBodyBytes) req.caller = await authenticate(req.headers.authorization, kind, projectIdOf(req), requestUseOf(req));
  };
}

/** Registers one declared route; a route without a valid `auth` stops the gateway from starting. */
function registerRoute(app: FastifyInstance, r: Route, authenticate: Authenticate, operatorChecks: OperatorChecks): void {
  if (!isRouteAuth(r.auth)) throw new Error(`route ${r.method} ${r.path} declares no authentication: set auth to 'admin', 'assistant', 'operator', 'metrics' or 'none'`);
  const auth = r.auth;
  const kind = auth === 'admin' || auth === 'assistant' ? auth : undefined;
  const browserAccess: BrowserAccess | undefined = r.cors && { policy: r.cors, methods: r.method };
  app.route({
    method: r.method,
    url: fastifyPath(r.path),
    // HEAD is answered 405 with the other methods the route does not declare.
    exposeHeadRoute: false,
    schema: schemaOf(r),
    config: { auth: r.auth, browserAccess, documented: true, ...(r.rawBody ? { rawBody: true } : {}) },
    ...(r.bodyLimit && kind ? { bodyLimit: r.bodyLimit, onRequest: keyBeforeLargeBody(authenticate, kind) } : {}),
    // After validation, so a malformed request is a 400 whatever its key; before the handler, so no route forgets it.
    preHandler: kind
      ? async (req) => {
          // `??=`: a large body's key was resolved before the body was read (keyBeforeLargeBody).
          req.caller ??= await authenticate(req.headers.authorization, kind, projectIdOf(req), requestUseOf(req));
        }
      : auth === 'operator' || auth === 'metrics'
        ? async (req) => operatorChecks[auth](req.headers.authorization)
        : [],
    ...(r.onAnswered && { onSend: answeredHook(r.onAnswered) }),
    handler: handlerOf(r),
  });
}

/** An onSend hook: it sees every answer of the route, also the ones Fastify gives before the handler (a refused body). */
function answeredHook(onAnswered: NonNullable<Route['onAnswered']>) {
  return async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    await onAnswered(restRequestOf(req, AbortSignal.abort()), reply.statusCode);
    return payload;
  };
}

const answeredMethods = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH'] as const;

/** OPTIONS (204 with Allow, or a CORS preflight) and 405 with Allow for the other methods of a known path. */
function registerPathAnswers(app: FastifyInstance, path: string, routes: Route[]): void {
  const allow = [...routes.map((r) => r.method), 'OPTIONS'].join(', ');
  const preflightOf = Object.fromEntries(routes.flatMap((r) => (r.cors ? [[r.method, { policy: r.cors, methods: r.method }]] : [])));
  app.route({
    method: 'OPTIONS',
    url: fastifyPath(path),
    config: { auth: 'none', preflightOf },
    handler: async (_req, reply) => reply.code(204).header('allow', allow).send(),
  });
  app.route({
    method: answeredMethods.filter((m) => !routes.some((r) => r.method === m)),
    url: fastifyPath(path),
    config: { auth: 'none' },
    // The method alone decides, so the answer comes before any body is read.
    onRequest: async (req, reply) =>
      reply
        .code(405)
        .header('allow', allow)
        .send({ error: `method ${req.method} not allowed; use ${allow}`, code: 'unimplemented' }),
    handler: async () => undefined,
  });
}

/** Registers the declared REST routes on a Fastify app: validation, authentication, CORS policy and OpenAPI in one place. */
export function registerRestRoutes(app: FastifyInstance, routes: readonly Route[], authenticate: Authenticate, operatorChecks = noOperatorTokens): void {
  const byPath = new Map<string, Route[]>();
  for (const r of routes) {
    registerRoute(app, r, authenticate, operatorChecks);
    byPath.set(r.path, [...(byPath.get(r.path) ?? []), r]);
  }
  for (const [path, same] of byPath) registerPathAnswers(app, path, same);
}
