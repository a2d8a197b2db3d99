import { cors as connectCors } from '@connectrpc/connect';
import type { FastifyCorsOptions } from '@fastify/cors';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors';
import type { TenancyStore } from '../tenancy/store';
import type { BrowserAccess, CorsPolicy } from '../rest/router';

const lowerCaseSet = (names: readonly string[]) => [...new Set(names.map((n) => n.toLowerCase()))];

// Headers a browser may send to, and read from, docent: Connect's and gRPC-web's own lists plus the REST API's
// (x-namespace: the Temporal Web UI sends it to the codec endpoint).
export const corsAllowHeaders = lowerCaseSet([
  ...connectCors.allowedHeaders,
  'authorization',
  'content-type',
  'idempotency-key',
  'x-request-id',
  'mcp-protocol-version',
  'mcp-session-id',
  'last-event-id',
  'x-namespace',
]);
export const corsExposeHeaders = lowerCaseSet([
  ...connectCors.exposedHeaders,
  'x-request-id',
  'retry-after',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'x-thread-id',
  'x-search-id',
  'x-docent-clamped',
  'x-session-id',
  'x-branch-name',
  'location',
  'x-vercel-ai-ui-message-stream',
  'x-vercel-ai-data-stream',
  'mcp-session-id',
  'etag',
]);

/** Any origin may read the route (public documents such as /openapi.json). */
export const publicCors: CorsPolicy = { kind: 'public' };

/**
 * Browsers may call the route only from the allowed origins of the project the path names, by its `{domain}` or
 * `{projectId}` parameter, and from `alsoAllowed`. An unknown project allows no origin.
 */
export function projectOrigins(tenancy: TenancyStore, alsoAllowed: readonly string[] = []): CorsPolicy {
  return { kind: 'origins', allows: async (origin, params) => alsoAllowed.includes(origin) || (await originsOf(tenancy, params)).includes(origin) };
}

/**
 * For the Connect and gRPC-web paths: the project travels in the body, which a preflight does not carry, so configured
 * origins and origins some project allows pass here; `projectOriginCheck` (rpc/browser-access.ts) then holds each call
 * to its own project's origins.
 */
export function anyProjectOrigin(tenancy: TenancyStore, configured: readonly string[]): CorsPolicy {
  return { kind: 'origins', allows: async (origin) => configured.includes(origin) || (await tenancy.anyProjectAllows(origin)) };
}

/** The allowed origins of the project named by `domain` or `projectId`; none for an unknown project. */
export async function originsOf(tenancy: TenancyStore, by: { domain?: string; projectId?: string }): Promise<readonly string[]> {
  const project = by.domain ? await tenancy.getProjectByDomain(by.domain) : by.projectId ? await tenancy.getProject(by.projectId) : null;
  return project?.allowedOrigins ?? [];
}

/**
 * Whether a browser's Origin is the gateway's own origin (the page at /playground/): no cross-origin request, so no
 * allow-list applies. Compared by host only, since TLS may end at a proxy in front of the gateway.
 */
export function isSameOrigin(origin: string, host: string | undefined): boolean {
  if (!host || !URL.canParse(origin)) return false;
  return new URL(origin).host === host.toLowerCase();
}

function browserAccessOf(req: FastifyRequest): BrowserAccess | undefined {
  const { preflightOf, browserAccess } = req.routeOptions.config;
  if (req.method !== 'OPTIONS' || !preflightOf) return browserAccess;
  const method = req.headers['access-control-request-method'];
  return typeof method === 'string' && Object.hasOwn(preflightOf, method) ? preflightOf[method] : undefined;
}

const off: FastifyCorsOptions = { origin: false };

/**
 * The @fastify/cors delegator: each route's declared policy decides. A refused origin is a 403 in the error shape
 * before anything else happens (no body read, no quota used); routes without a policy send no CORS headers.
 */
export async function corsOptionsFor(req: FastifyRequest): Promise<FastifyCorsOptions> {
  const origin = req.headers.origin;
  const access = browserAccessOf(req);
  if (!origin || !access || isSameOrigin(origin, req.host)) return off;
  const common = { methods: access.methods, allowedHeaders: corsAllowHeaders, exposedHeaders: corsExposeHeaders, maxAge: 600, strictPreflight: false };
  if (access.policy.kind === 'public') return { ...common, origin: '*' };
  if (!(await access.policy.allows(origin, req.params as Record<string, string>))) {
    throw new AppError('permission_denied', `origin ${origin.slice(0, 200)} may not call this endpoint: it is not among the project's allowed origins`);
  }
  return { ...common, origin };
}
