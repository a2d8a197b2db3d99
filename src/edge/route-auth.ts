import type { Caller, KeyKind } from '../auth/api-keys';

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
export type Authenticate = (authorization: string | undefined, kind: KeyKind, projectId?: string) => Promise<Caller>;
/** Checks an Authorization header against an operator token, or throws 401/403. */
export type AuthenticateOperator = (authorization: string | undefined) => Promise<void>;
/** The check of each operator token, by the route auth that names it. */
export type OperatorChecks = Record<OperatorAuth, AuthenticateOperator>;
