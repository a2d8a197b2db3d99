import type { TenancyStore } from '../tenancy/store';
import type { CorsPolicy } from './router';

// Headers a browser may send to, and read from, docent: REST routes, and Connect and gRPC-web (see @connectrpc/cors).
export const corsAllowHeaders = [
  'authorization', 'content-type', 'idempotency-key', 'x-request-id', 'connect-protocol-version', 'connect-timeout-ms',
  'connect-accept-encoding', 'connect-content-encoding', 'x-grpc-web', 'x-user-agent', 'grpc-timeout',
].join(', ');
export const corsExposeHeaders = [
  'x-request-id', 'retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'x-thread-id', 'location',
  'x-vercel-ai-ui-message-stream', 'x-vercel-ai-data-stream', 'grpc-status', 'grpc-message', 'grpc-status-details-bin',
].join(', ');

/** Any origin may read the route (public documents such as /openapi.json). */
export const publicCors: CorsPolicy = { kind: 'public' };

/**
 * Browsers may call the route only from the allowed origins of the project the path names, by its `{domain}` or
 * `{projectId}` parameter. An unknown project allows no origin.
 */
export function projectOrigins(tenancy: TenancyStore, alsoAllowed: readonly string[] = []): CorsPolicy {
  return {
    kind: 'origins',
    async resolve(params) {
      return [...alsoAllowed, ...(await originsOf(tenancy, params))];
    },
  };
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
