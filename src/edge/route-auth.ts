import type { Caller, KeyKind } from '../auth/api-keys';
import type { KeyUse } from '../auth/key-use';
import { clientIp } from '../limits/client-ip';

/**
 * The key a route needs: checked before its handler runs, and shown in /openapi.json. `operator`: the codec token
 * (DOCENT_CODEC_TOKEN); `metrics`: the scrape token (DOCENT_METRICS_TOKEN).
 */
export type RouteAuth = KeyKind | 'none' | OperatorAuth;
export type OperatorAuth = 'operator' | 'metrics';
const routeAuths: readonly unknown[] = ['admin', 'assistant', 'none', 'operator', 'metrics'] satisfies RouteAuth[];
/** Whether a declaration (from typed code or not) names one of the keys a route may need. */
export const isRouteAuth = (value: unknown): value is RouteAuth => routeAuths.includes(value);

/**
 * Resolves an Authorization header to a caller of the given kind, or throws 401/403 (404 for a project out of an
 * operator key's scope). With the route's `projectId`, an admin route also takes an operator key covering the project.
 */
export type Authenticate = (authorization: string | undefined, kind: KeyKind, projectId: string | undefined, use: RequestUse) => Promise<Caller>;

/**
 * How the request uses its key, for the key's restrictions (src/auth/key-use.ts): the client's address, as given or
 * as the socket and X-Forwarded-For (from trusted proxies) say, and whether the request changes anything.
 */
export type RequestUse = { writes: boolean } & ({ clientIp: string } | { remoteAddress: string; forwardedFor: string | string[] | undefined });
/** Checks an Authorization header against an operator token, or throws 401/403. */
export type AuthenticateOperator = (authorization: string | undefined) => Promise<void>;
/** The check of each operator token, by the route auth that names it. */
export type OperatorChecks = Record<OperatorAuth, AuthenticateOperator>;

/** The request's use of its key with the client's address resolved (X-Forwarded-For only from `trustedProxies`). */
export function keyUseOf(use: RequestUse, trustedProxies: readonly string[]): KeyUse {
  return 'clientIp' in use ? use : { clientIp: clientIp(use.remoteAddress, use.forwardedFor, trustedProxies), writes: use.writes };
}
