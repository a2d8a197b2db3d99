import { z } from 'zod';
import { AdminAuditLog } from '../admin/audit';
import { ConsoleSessionStore, csrfTokenOf, sessionHours } from '../auth/console-sessions';
import type { Deps } from '../deps';
import { AppError } from '../errors';
import { clientIp } from '../limits/client-ip';
import { route, type RestRequest, type Route } from '../rest/router';
import { ConsoleSignInLimits } from '../auth/console-sign-in-limits';
import { consoleCookieOf, refuseCrossSite, sessionTokenOf, setCookie } from './session-cookie';

const signInBody = z.strictObject({ key: z.string().min(1).max(200) });
const sessionBody = z.object({
  kind: z.enum(['operator', 'admin']),
  keyId: z.string(),
  orgId: z.string().optional(),
  projectId: z.string().optional(),
  expiresAt: z.string(),
  csrfToken: z.string(),
  temporalWorkflowsUrl: z.string().describe("The Temporal Web UI's workflow list of the deployment's namespace (DOCENT_TEMPORAL_UI_URL): a job's workflow is …/agent-job-<jobId>"),
});

/**
 * The console's sign-in (docs/console.md): a key is exchanged for a server-side session whose token is an HttpOnly
 * cookie; the page then reads who it is and its CSRF token with GET, and signs out with DELETE.
 */
export function consoleSessionRoutes(deps: Deps): Route[] {
  const sessions = new ConsoleSessionStore(deps.mongo.db);
  // Secure (and __Host-) by the gateway's public address, a setting: never by what a request's headers claim.
  const consoleCookie = consoleCookieOf(deps.config.publicUrl);
  const cookie = (value: string, maxAgeSeconds: number) => setCookie(consoleCookie, value, maxAgeSeconds);
  const limits = new ConsoleSignInLimits(deps.mongo.db, deps.config.console.signInFailures);
  // Where the job page links each job's workflow (the Temporal UI's path for a namespace's workflows).
  const { uiUrl, namespace } = deps.config.temporal;
  const temporalWorkflowsUrl = `${uiUrl.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows`;
  const addressOf = (req: RestRequest) => clientIp(req.remoteAddress, req.headers['x-forwarded-for'], deps.config.trustedProxies);
  const audit = new AdminAuditLog(deps.mongo.db, deps.config.adminAuditDays);
  const record = (req: RestRequest, method: string, status: number, keyId?: string, keyKind?: 'operator' | 'admin') =>
    audit
      .record({
        ...(keyId && keyKind && { keyId, keyKind }),
        method,
        route: '/console/session',
        targets: {},
        clientAddress: addressOf(req),
        status,
      })
      .catch((err: unknown) => deps.log.error({ err }, 'console sign-in audit entry not written'));
  const current = async (req: RestRequest) => {
    const token = sessionTokenOf(req.headers.cookie, consoleCookie);
    if (!token) throw new AppError('unauthenticated', 'not signed in to the console');
    return { token, caller: await deps.keys.authenticateAdminOrOperator(`Bearer ${token}`), session: await sessions.find(token) };
  };
  return [
    route({
      method: 'POST',
      path: '/console/session',
      summary: 'Sign in to the console with an operator key or a project admin key; answers with an HttpOnly session cookie',
      auth: 'none',
      body: signInBody,
      responses: { 201: { description: 'Signed in; the cookie is set', json: sessionBody } },
      handler: async (req) => {
        refuseCrossSite(req.headers, undefined);
        const address = addressOf(req);
        const wait = await limits.refusedFor(address, req.body.key);
        if (wait !== null) throw new AppError('resource_exhausted', `too many failed sign-ins from this address or with this key; try again in ${wait} s`, wait);
        const caller = await deps.keys.authenticateAdminOrOperator(`Bearer ${req.body.key}`).catch(async (err: unknown) => {
          // One audit entry per address and window: guesses cannot flood the log.
          if (await limits.failed(address, req.body.key)) await record(req, 'POST', err instanceof AppError && err.code === 'permission_denied' ? 403 : 401);
          throw err;
        });
        const { token, expiresAt } = await sessions.create(caller.keyId);
        await record(req, 'POST', 201, caller.keyId, caller.kind === 'operator' ? 'operator' : 'admin');
        return {
          status: 201,
          headers: { 'set-cookie': cookie(token, sessionHours * 3600), 'cache-control': 'no-store' },
          body: { ...describe(caller), expiresAt: expiresAt.toISOString(), csrfToken: csrfTokenOf(token), temporalWorkflowsUrl },
        };
      },
    }),
    route({
      method: 'GET',
      path: '/console/session',
      summary: "The console session's key (id, kind, scope), its expiry and the CSRF token for state-changing requests",
      auth: 'none',
      responses: { 200: { description: 'The session', json: sessionBody } },
      handler: async (req) => {
        const { token, caller, session } = await current(req);
        return {
          status: 200,
          headers: { 'cache-control': 'no-store' },
          body: { ...describe(caller), expiresAt: session!.expiresAt.toISOString(), csrfToken: csrfTokenOf(token), temporalWorkflowsUrl },
        };
      },
    }),
    route({
      method: 'DELETE',
      path: '/console/session',
      summary: 'Sign out: the session ends on the server and its cookie is cleared',
      auth: 'none',
      responses: { 204: { description: 'Signed out', streamed: 'text/plain' } },
      handler: async (req) => {
        const { token, caller } = await current(req);
        await sessions.delete(token);
        await record(req, 'DELETE', 204, caller.keyId, caller.kind === 'operator' ? 'operator' : 'admin');
        return { status: 204, headers: { 'set-cookie': cookie('', 0) } };
      },
    }),
  ];
}

function describe(caller: Awaited<ReturnType<Deps['keys']['authenticateAdminOrOperator']>>) {
  return caller.kind === 'operator'
    ? { kind: 'operator' as const, keyId: caller.keyId, ...(caller.orgId && { orgId: caller.orgId }) }
    : { kind: 'admin' as const, keyId: caller.keyId, orgId: caller.orgId, ...(caller.projectId && { projectId: caller.projectId }) };
}
