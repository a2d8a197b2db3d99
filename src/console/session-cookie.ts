import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { csrfTokenOf, sessionPrefix } from '../auth/console-sessions';
import { isSameOrigin } from '../edge/cors';
import { AppError } from '../errors';

/**
 * The console's cookie: the session token, HttpOnly, so page scripts never hold a credential. Where the gateway's
 * public address is https (DOCENT_PUBLIC_URL) it is a `__Host-` cookie, always Secure, which no sibling host can set
 * or shadow; over plain http (a local stack) browsers refuse such a cookie, so it goes without the prefix.
 */
export interface ConsoleCookie {
  name: string;
  secure: boolean;
}

export const consoleCookieOf = (publicUrl: string | undefined): ConsoleCookie =>
  publicUrl?.startsWith('https:') ? { name: '__Host-docent_console', secure: true } : { name: 'docent_console', secure: false };
/** The header the console sends its session's CSRF token in, on every state-changing request. */
export const csrfHeader = 'x-docent-csrf';

const tokenShape = new RegExp(`^${sessionPrefix}[A-Za-z0-9_-]{43}$`);
const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The session token in a Cookie header, under the console cookie's name (only that one), if one of the right shape is there. */
export function sessionTokenOf(cookieHeader: string | undefined, cookie: ConsoleCookie): string | undefined {
  for (const part of (cookieHeader ?? '').split(';')) {
    const [name, value] = part.trim().split('=', 2);
    if (name === cookie.name && value && tokenShape.test(value)) return value;
  }
  return undefined;
}

/** The Set-Cookie value of a session token (an empty value with age 0 ends it). */
export const setCookie = (cookie: ConsoleCookie, value: string, maxAgeSeconds: number) =>
  `${cookie.name}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${cookie.secure ? '; Secure' : ''}`;

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Refuses a state-changing request that a page of another origin could have made with the cookie: the browser's
 * Origin or Sec-Fetch-Site names another site, or the session's CSRF token is missing or wrong (403).
 */
export function refuseCrossSite(headers: IncomingHttpHeaders, token: string | undefined): void {
  const origin = headers.origin;
  const host = headers.host ?? (headers[':authority'] as string | undefined);
  if (origin !== undefined && !isSameOrigin(origin, host)) throw new AppError('permission_denied', 'a console request from another origin is refused');
  const site = headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') throw new AppError('permission_denied', 'a console request from another site is refused');
  if (token === undefined) return;
  const sent = headers[csrfHeader];
  // Digests of equal length, so the comparison takes the same time whatever was sent.
  if (typeof sent !== 'string' || !timingSafeEqual(digest(sent), digest(csrfTokenOf(token)))) {
    throw new AppError('permission_denied', `a state-changing console request needs the session's CSRF token in the ${csrfHeader} header`);
  }
}

/**
 * Lets the console's cookie stand for the key it was made from, on every route a script calls with that key: the
 * token becomes the request's credential (src/auth/api-keys.ts resolves it to its key) once the cross-site checks
 * pass. What the key may do is then decided as for a script's Authorization header (src/edge/app.ts): nothing more.
 */
export const sessionCredential =
  (cookie: ConsoleCookie) =>
  async (req: FastifyRequest): Promise<void> => {
    const header = req.headers.authorization;
    if (header?.trim().startsWith(`Bearer ${sessionPrefix}`)) throw new AppError('unauthenticated', 'a console session is accepted only as the console cookie');
    const token = sessionTokenOf(req.headers.cookie, cookie);
    // An explicit key wins: a script's request is never taken over by a cookie the same client happens to hold.
    if (!token || header !== undefined) return;
    // Signing in again over an old cookie needs no token: src/console/session-routes.ts checks the origin itself.
    const signingIn = req.method === 'POST' && req.routeOptions.url === '/console/session';
    if (!safeMethods.has(req.method)) refuseCrossSite(req.headers, signingIn ? undefined : token);
    req.headers.authorization = `Bearer ${token}`;
  };
