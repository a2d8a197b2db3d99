import type { z } from 'zod';
import { githubDeliveriesBody } from './github-routes';
import { addForgeBody, createKeyBody, createOrgBody, createProjectBody, createWebhookBody, followBody, projectSettingsBody, secretBody } from '../admin/admin-bodies';
import { type AdminCaller, adminCaller, projectAdminCaller, requireAllOrgs, visibleProject } from '../admin/access';
import { AdminOperations, adminStores, type AuditNote } from '../admin/admin-operations';
import { AdminAuditLog, auditDetails } from '../admin/audit';
import { orgDeletionConsequence, projectDeletionConsequence } from '../admin/project-deletion';
import type { AuditDetails } from '../admin/tenancy-operations';
import type { Deps } from '../deps';
import { AppError } from '../errors';
import { clientIp } from '../limits/client-ip';
import { checkKeyUse } from '../auth/key-use';
import { keyUseOf } from '../edge/route-auth';
import { automationRoutesAt } from './automation-routes';
import * as schemas from './admin-schemas';
import { createdWebhookBody, deletedBody, webhookDeliveriesBody, webhookListBody } from './response-schemas';
import { route, type ResponseDoc, type RestRequest, type RestResponse, type Route } from './router';

const ok = (description: string, json: z.ZodType): Record<number, ResponseDoc> => ({ 200: { description, json } });
const created = (description: string, json: z.ZodType): Record<number, ResponseDoc> => ({ 201: { description, json } });
/** What /openapi.json lists as an operator route's credentials (the handlers check them: src/admin/access.ts). */
const operatorKey: Array<Record<string, string[]>> = [{ operatorKey: [] }];
const operatorOrProjectAdminKey: Array<Record<string, string[]>> = [{ operatorKey: [] }, { adminKey: [] }];
/** Dates as ISO strings, undefined fields gone: the answer as JSON, so the response schemas see what the client will. */
const asJson = (body: unknown): unknown => (body === undefined ? undefined : JSON.parse(JSON.stringify(body)));
const auditedBodyFields = ['id', 'orgId', 'name', 'kind'];

/** `?keepMinted=true|false`; anything else is 400, not read as either. */
function keepMintedOf(v: string | null): boolean {
  if (v === null || v === 'false') return false;
  if (v === 'true') return true;
  throw new AppError('invalid_argument', 'keepMinted must be true or false');
}

/**
 * The operator API: what the CLI administers, over HTTP, authorised by an operator key (every organization or one;
 * another organization's resources are 404) or, for one project's operations, that project's admin key. The
 * operations are the ones the CLI calls (src/admin/*-operations.ts): one implementation for both.
 */
export function adminRoutes(deps: Deps): Route[] {
  const ops = new AdminOperations(adminStores(deps));
  const audit = new AdminAuditLog(deps.mongo.db, deps.config.adminAuditDays);
  // Resolved once per request: the handler authorises with it, the audit entry names it.
  // By the request's headers object: the handler's request and the audit hook's share it.
  const callers = new WeakMap<object, Promise<AdminCaller>>();
  const caller = (req: Pick<RestRequest, 'headers' | 'method' | 'remoteAddress'>) => {
    const known =
      callers.get(req.headers) ??
      adminCaller(deps.keys, req.headers.authorization).then((who) => {
        // A project's admin key keeps its restrictions here too: from where, and read-only (src/auth/key-use.ts).
        if (who.kind === 'admin')
          checkKeyUse(who.restrictions, keyUseOf({ remoteAddress: req.remoteAddress, forwardedFor: req.headers['x-forwarded-for'], writes: req.method !== 'GET' }, deps.config.trustedProxies));
        return who;
      });
    callers.set(req.headers, known);
    return known;
  };
  // What an operation noted for its audit entry (the settings it moved, the key it made), by the same object.
  const notes = new WeakMap<object, AuditDetails>();
  const noteOf =
    (req: Pick<RestRequest, 'headers'>): AuditNote =>
    (details) =>
      notes.set(req.headers, details);
  /** A route on one documentation domain; its operation checks the caller may administer the domain's project. */
  const docsRoute = <B = undefined>(r: {
    method: Route['method'];
    path: string;
    summary: string;
    body?: z.ZodType<B>;
    responses: Record<number, ResponseDoc>;
    /** 200 unless said (202: started, followed by the id in the answer). */
    status?: number;
    run: (who: AdminCaller, domain: string, req: RestRequest<B, 'none'>) => Promise<unknown>;
  }) =>
    route<B, 'none'>({
      method: r.method,
      path: `/v2/admin/docs/{domain}${r.path}`,
      summary: r.summary,
      auth: 'none',
      responses: r.responses,
      ...(r.body && { body: r.body }),
      handler: async (req) => ({ status: r.status ?? 200, body: await r.run(await caller(req), req.params.domain!, req) }),
    });
  /**
   * Every answer goes to the audit log before it is sent, refusals (401, 403, a body the schema refused) included: the
   * key's id and kind, never the key; target ids, never bodies' values. The answer is JSON'd for its response schema.
   */
  const audited = (r: Route): Route => ({
    ...r,
    security: r.security ?? operatorOrProjectAdminKey,
    handler: async (req) => {
      const res: RestResponse = await r.handler(req);
      return { ...res, body: asJson(res.body) };
    },
    onAnswered: async (req, status) => {
      const who = await caller(req).catch(() => undefined);
      const body = (req.body !== null && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
      const named = Object.fromEntries(auditedBodyFields.filter((k) => typeof body[k] === 'string').map((k) => [k, (body[k] as string).slice(0, 200)]));
      await audit
        .record({
          ...(who && { keyId: who.keyId, keyKind: who.kind }),
          method: r.method,
          route: r.path,
          targets: { ...req.params, ...named },
          ...auditDetails(notes.get(req.headers)),
          clientAddress: clientIp(req.remoteAddress, req.headers['x-forwarded-for'], deps.config.trustedProxies),
          status,
        })
        .catch((err: unknown) => deps.log.error({ err }, 'operator API audit entry not written'));
    },
  });
  /** A route on one project; its operation checks the caller may administer it (else 404). */
  const projectRoute = <B = undefined>(r: {
    method: Route['method'];
    path: string;
    summary: string;
    body?: z.ZodType<B>;
    responses: Record<number, ResponseDoc>;
    run: (who: AdminCaller, projectId: string, req: RestRequest<B, 'none'>) => Promise<RestResponse>;
  }) =>
    route<B, 'none'>({
      method: r.method,
      path: r.path,
      summary: r.summary,
      auth: 'none',
      responses: r.responses,
      ...(r.body && { body: r.body }),
      // The operation checks that the caller sees the project (src/admin/admin-operations.ts).
      handler: async (req) => r.run(await caller(req), req.params.projectId!, req),
    });
  return [
    route({
      method: 'GET',
      path: '/v2/admin/audit',
      summary: 'The audit log of the operator API, newest first (`limit`, default 50, and `cursor` from the previous page)',
      security: operatorKey,
      responses: ok('The entries, newest first', schemas.auditPageBody),
      auth: 'none',
      handler: async (req) => {
        requireAllOrgs(await caller(req));
        const limit = req.query.has('limit') ? Number(req.query.get('limit')) : 50;
        return { status: 200, body: await audit.list(limit, req.query.get('cursor') ?? undefined) };
      },
    }),
    route({
      method: 'POST',
      path: '/v2/admin/orgs',
      summary: 'Create an organization (operator key for all organizations)',
      security: operatorKey,
      responses: created('The organization', schemas.orgBody),
      auth: 'none',
      body: createOrgBody,
      handler: async (req) => ({ status: 201, body: await ops.createOrg(await caller(req), req.body.id) }),
    }),
    route({
      method: 'DELETE',
      path: '/v2/admin/orgs/{org}',
      summary: `Delete an organization with no projects (operator key for all organizations). ${orgDeletionConsequence}`,
      security: operatorKey,
      responses: ok('Deleted', schemas.deletedOrgBody),
      auth: 'none',
      handler: async (req) => ({ status: 200, body: await ops.deleteOrg(await caller(req), req.params.org!, noteOf(req)) }),
    }),
    route({
      method: 'GET',
      path: '/v2/admin/orgs',
      summary: 'The organizations the operator key covers (at most 500)',
      security: operatorKey,
      responses: ok('The organizations', schemas.orgListBody),
      auth: 'none',
      handler: async (req) => ({ status: 200, body: { orgs: await ops.listOrgs(await caller(req)) } }),
    }),
    // An organization's forge connections (docs/forges.md): its operator key, or one for all organizations.
    route({
      method: 'POST',
      path: '/v2/admin/orgs/{org}/forges',
      summary:
        'Add a forge connection (`kind: github`, `apiUrl` and `gitUrl` for GitHub Enterprise, and `token` or `appInstallationId`), tested against the forge first; the answer is the only time its webhook secret is shown',
      security: operatorKey,
      responses: created('The connection and its webhook secret, shown only here', schemas.addedForgeBody),
      auth: 'none',
      body: addForgeBody,
      handler: async (req) => ({ status: 201, body: await ops.addForge(await caller(req), req.params.org!, req.body) }),
    }),
    route({
      method: 'GET',
      path: '/v2/admin/orgs/{org}/forges',
      summary: "The organization's forge connections, oldest first (never a token or a webhook secret)",
      security: operatorKey,
      responses: ok('The connections', schemas.forgeListBody),
      auth: 'none',
      handler: async (req) => ({ status: 200, body: { forges: await ops.listForges(await caller(req), req.params.org!) } }),
    }),
    route({
      method: 'DELETE',
      path: '/v2/admin/orgs/{org}/forges/{forgeId}',
      summary: 'Remove a forge connection; repositories named through it can no longer be reached',
      security: operatorKey,
      responses: ok('Removed', deletedBody),
      auth: 'none',
      handler: async (req) => ({ status: 200, body: await ops.removeForge(await caller(req), req.params.org!, req.params.forgeId!) }),
    }),
    route({
      method: 'GET',
      path: '/v2/admin/orgs/{org}/forges/{forgeId}/deliveries',
      summary: 'The webhook deliveries the connection received, newest first, with what was done or why not (last 30 days, at most 100)',
      security: operatorKey,
      responses: ok('The deliveries', githubDeliveriesBody),
      auth: 'none',
      handler: async (req) => ({ status: 200, body: { deliveries: await ops.forgeDeliveries(await caller(req), req.params.org!, req.params.forgeId!) } }),
    }),
    route({
      method: 'POST',
      path: '/v2/admin/orgs/{org}/forges/{forgeId}/webhook-secret',
      summary: "Make a new secret for the forge connection's webhooks: shown once, the previous one stops verifying",
      security: operatorKey,
      responses: ok('The new secret, shown only here', schemas.rotatedForgeSecretBody),
      auth: 'none',
      handler: async (req) => ({ status: 200, body: await ops.rotateForgeWebhookSecret(await caller(req), req.params.org!, req.params.forgeId!) }),
    }),
    route({
      method: 'GET',
      path: '/v2/admin/projects',
      summary: 'The projects the operator key covers, of one organization with `orgId` (at most 500)',
      security: operatorKey,
      responses: ok('The projects', schemas.projectListBody),
      auth: 'none',
      handler: async (req) => ({ status: 200, body: { projects: await ops.listProjects(await caller(req), req.query.get('orgId') ?? undefined) } }),
    }),
    route({
      method: 'POST',
      path: '/v2/admin/projects',
      summary: 'Create a project in an organization the operator key covers',
      security: operatorKey,
      responses: created('The project', schemas.projectBody),
      auth: 'none',
      body: createProjectBody,
      handler: async (req) => ({ status: 201, body: await ops.createProject(await caller(req), req.body) }),
    }),
    route({
      method: 'GET',
      path: '/v2/admin/projects/{projectId}',
      summary: 'A project and its settings',
      responses: ok('The project', schemas.projectBody),
      auth: 'none',
      handler: async (req) => ({ status: 200, body: await ops.getProject(await caller(req), req.params.projectId!) }),
    }),
    projectRoute({
      method: 'PATCH',
      path: '/v2/admin/projects/{projectId}',
      summary: "Update a project's sandbox settings (setup, checks, network, allowed hosts, caps, cache keys), allowed origins, and (operator key) its repository, base ref and documentation domain",
      responses: ok('The sandbox settings as updated', schemas.projectSettingsBody),
      body: projectSettingsBody,
      run: async (who, projectId, req) => ({ status: 200, body: await ops.updateProject(who, projectId, req.body, noteOf(req)) }),
    }),
    projectRoute({
      method: 'DELETE',
      path: '/v2/admin/projects/{projectId}',
      summary: `Delete a project (operator key of its organization). ${projectDeletionConsequence}`,
      responses: ok('Deleted, with what went', schemas.deletedProjectBody),
      run: async (who, projectId, req) => ({ status: 200, body: await ops.deleteProject(who, projectId, noteOf(req)) }),
    }),
    projectRoute({
      method: 'POST',
      path: '/v2/admin/projects/{projectId}/keys',
      summary: 'Make a project key (admin or assistant); the answer is the only time the key is shown',
      responses: created('The key, shown only here', schemas.createdKeyBody),
      body: createKeyBody,
      run: async (who, projectId, req) => ({ status: 201, body: await ops.createKey(who, projectId, req.body, noteOf(req)) }),
    }),
    projectRoute({
      method: 'DELETE',
      path: '/v2/admin/projects/{projectId}/keys/{keyId}',
      summary: "Revoke one of the project's keys and the keys made with it (and with those); `keepMinted=true` revokes the key alone",
      responses: ok('Revoked', schemas.revokedKeyBody),
      run: async (who, projectId, req) => {
        const keepMinted = keepMintedOf(req.query.get('keepMinted'));
        return { status: 200, body: await ops.revokeKey(who, projectId, req.params.keyId!, { keepMinted }, noteOf(req)) };
      },
    }),
    projectRoute({
      method: 'GET',
      path: '/v2/admin/projects/{projectId}/keys',
      summary: "List the project's keys (never the keys themselves)",
      responses: ok('The keys, never the keys themselves', schemas.keyListBody),
      run: async (who, projectId) => ({ status: 200, body: { keys: await ops.listKeys(who, projectId) } }),
    }),
    projectRoute({
      method: 'POST',
      path: '/v2/admin/projects/{projectId}/webhooks',
      summary: 'Add a webhook endpoint; the answer shows its signing secret once',
      responses: created('The endpoint and its whsec_… secret', createdWebhookBody),
      body: createWebhookBody,
      run: async (who, projectId, req) => ({ status: 201, body: await ops.createWebhook(who, projectId, req.body) }),
    }),
    projectRoute({
      method: 'GET',
      path: '/v2/admin/projects/{projectId}/webhooks',
      summary: "The project's webhook endpoints (never their secrets)",
      responses: ok('The endpoints', webhookListBody),
      run: async (who, projectId) => ({ status: 200, body: { webhooks: await ops.listWebhooks(who, projectId) } }),
    }),
    projectRoute({
      method: 'DELETE',
      path: '/v2/admin/projects/{projectId}/webhooks/{webhookId}',
      summary: 'Delete a webhook endpoint',
      responses: ok('Deleted', deletedBody),
      run: async (who, projectId, req) => ({ status: 200, body: await ops.deleteWebhook(who, projectId, req.params.webhookId!) }),
    }),
    projectRoute({
      method: 'GET',
      path: '/v2/admin/projects/{projectId}/webhooks/{webhookId}/deliveries',
      summary: "A webhook endpoint's delivery log, newest first",
      responses: ok('Delivery attempts', webhookDeliveriesBody),
      run: async (who, projectId, req) => ({ status: 200, body: { deliveries: await ops.webhookDeliveries(who, projectId, req.params.webhookId!) } }),
    }),
    projectRoute({
      method: 'POST',
      path: '/v2/admin/projects/{projectId}/secrets',
      summary: 'Write a project secret (the value is never read back)',
      responses: ok('The name and when it was set', schemas.secretSetBody),
      body: secretBody,
      run: async (who, projectId, req) => ({ status: 200, body: await ops.setSecret(who, projectId, req.body) }),
    }),
    projectRoute({
      method: 'GET',
      path: '/v2/admin/projects/{projectId}/secrets',
      summary: "The names of the project's secrets, never their values",
      responses: ok('Names, never values', schemas.secretListBody),
      run: async (who, projectId) => ({ status: 200, body: { secrets: await ops.listSecrets(who, projectId) } }),
    }),
    projectRoute({
      method: 'POST',
      path: '/v2/admin/projects/{projectId}/cache/clear',
      summary: "Empty the project's setup cache on every worker (its next job on each runs setup again)",
      responses: ok('The new cache generation', schemas.cacheClearedBody),
      run: async (who, projectId) => ({ status: 200, body: await ops.clearSetupCache(who, projectId) }),
    }),
    projectRoute({
      method: 'POST',
      path: '/v2/admin/projects/{projectId}/github/webhook-secret',
      summary: "Make the project's own secret for its repository's GitHub webhook (token mode; as `docent project webhook-secret`): shown once, the previous one stops verifying",
      responses: ok('The secret, shown only here', schemas.githubWebhookSecretBody),
      run: async (who, projectId) => ({ status: 200, body: await ops.issueGitHubWebhookSecret(who, projectId) }),
    }),
    docsRoute({
      method: 'GET',
      path: '',
      summary:
        "The domain's docs health: pages and passages served, the last ingest, and what it follows with its last and next sync (as `docent docs status`); 404 when nothing was ingested and nothing is followed",
      responses: ok('The docs health', schemas.docsStatusBody),
      run: (who, domain) => ops.docsStatus(who, domain),
    }),
    docsRoute({
      method: 'GET',
      path: '/pages',
      summary: "The served pages by path with their passage counts, `limit` (1..500, default 100) at a time after the path `after` (the previous answer's `next`)",
      responses: ok('The pages', schemas.docsPagesBody),
      run: (who, domain, req) => ops.docsPages(who, domain, { limit: req.query.has('limit') ? Number(req.query.get('limit')) : undefined, after: req.query.get('after') ?? undefined }),
    }),
    docsRoute({
      method: 'GET',
      path: '/page',
      summary: 'One served page (`path`, as the page list names it) with its passages in page order',
      responses: ok('The page and its passages', schemas.docsPageBody),
      run: (who, domain, req) => ops.docsPage(who, domain, req.query.get('path') ?? ''),
    }),
    docsRoute({
      method: 'POST',
      path: '/syncs',
      summary: 'Start a sync (or crawl) of the followed docs now, queued behind a running one; answers at once with its id, followed at `GET …/syncs/{id}`',
      responses: { 202: { description: 'The sync, queued', json: schemas.docsSyncRunBody } },
      status: 202,
      run: (who, domain) => ops.startDocsSync(who, domain),
    }),
    docsRoute({
      method: 'GET',
      path: '/syncs/{id}',
      summary: 'Where a started sync is: queued, in_progress (with its indexing progress), success (with what it did) or failure (with why)',
      responses: ok('The sync', schemas.docsSyncRunBody),
      run: (who, domain, req) => ops.docsSyncRun(who, domain, req.params.id!),
    }),
    docsRoute({
      method: 'POST',
      path: '/follow',
      summary:
        'Follow a docs repository (`repository`, `ref`, `docsPath`, `baseUrl`) or crawl a published site (`sitemap`) on a schedule (`every`, default 10m); the first sync starts at once unless `firstNow` is false',
      body: followBody,
      responses: ok('What the domain now follows', schemas.followedBody),
      run: (who, domain, req) => ops.followDocs(who, domain, req.body),
    }),
    docsRoute({
      method: 'DELETE',
      path: '/follow',
      summary: 'Stop following; the served docs stay as last synced',
      responses: ok('No longer followed', schemas.unfollowedBody),
      run: (who, domain) => ops.unfollowDocs(who, domain),
    }),
    docsRoute({
      method: 'POST',
      path: '/sync',
      summary: 'Sync (or crawl) the followed docs now and answer when the sync has ended, with what it did (a long crawl outlasts client timeouts: `POST …/syncs` answers at once)',
      responses: ok('What the sync did', schemas.docsSyncResultBody),
      run: (who, domain) => ops.syncDocs(who, domain),
    }),
    ...automationRoutesAt(deps, {
      base: '/v2/admin/projects/{projectId}/automations',
      auth: 'none',
      callerOf: async (req) => {
        const who = await caller(req);
        return projectAdminCaller(who, await visibleProject(deps.tenancy, who, req.params.projectId!));
      },
    }),
  ].map(audited);
}
