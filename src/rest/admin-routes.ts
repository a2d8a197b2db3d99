import { z } from 'zod';
import { type AdminCaller, adminCaller, requireAllOrgs, requireOrg, visibleProject } from '../admin/access';
import { AdminAuditLog } from '../admin/audit';
import type { Deps } from '../deps';
import { AppError, toRestError } from '../errors';
import { clientIp } from '../limits/client-ip';
import { SecretBox } from '../crypto/secret-box';
import { ProjectSecretStore } from '../secrets/project-secrets';
import { WEBHOOK_EVENTS } from '../webhooks/store';
import { setSecret, listSecrets } from '../admin/secret-operations';
import { createKey, createOrg, createProject, revokeKey, updateProjectChecks, type Output } from '../admin/tenancy-operations';
import { createWebhook, deleteWebhook, listWebhooks, webhookDeliveries } from '../admin/webhook-operations';
import { route, type RestRequest, type RestResponse, type Route } from './router';

const id = z.string().min(1).max(64);
const createOrgBody = z.strictObject({ id });
const createProjectBody = z.strictObject({
  id,
  orgId: id,
  repository: z.string().min(1).max(2000),
  ref: z.string().min(1).max(200),
  domain: z.string().min(1).max(253),
  allowedOrigins: z.array(z.string().max(2000)).max(50).optional(),
});
const commands = z.array(z.string().max(4096)).max(20);
const projectSettingsBody = z.strictObject({
  setup: commands.optional(),
  check: commands.optional(),
  clearChecks: z.boolean().optional(),
  network: z.boolean().optional(),
  allowHosts: z.array(z.string().max(253)).max(100).optional(),
  secretsToChecks: z.boolean().optional(),
  secretsForAgentCode: z.boolean().optional(),
  cacheKeys: z.array(z.string().max(500)).max(20).optional(),
  maintenance: commands.optional(),
  caps: z.strictObject({ maxTurnTokens: z.number().nonnegative().optional(), maxTurnMinutes: z.number().nonnegative().optional(), maxJobCostUsd: z.number().nonnegative().optional() }).optional(),
  fairnessWeight: z.number().optional(),
});
const createKeyBody = z.strictObject({ kind: z.enum(['admin', 'assistant']), groups: z.array(z.string().max(100)).max(20).optional() });
const createWebhookBody = z.strictObject({ url: z.string().max(2000), events: z.array(z.enum(WEBHOOK_EVENTS)).max(WEBHOOK_EVENTS.length).optional() });
const secretBody = z.strictObject({
  name: z.string().min(1).max(100),
  value: z
    .string()
    .min(1)
    .max(64 * 1024),
});

const listLimit = 500;
const json = (status: number, out: Output) => ({ status, body: out.json });

/**
 * The operator API: what the CLI administers, over HTTP, authorised by an operator key (every organization or one;
 * another organization's resources are 404) or, for one project's operations, that project's admin key. The
 * operations are the ones the CLI calls (src/admin/*-operations.ts): one implementation for both.
 */
export function adminRoutes(deps: Deps): Route[] {
  const secrets = new ProjectSecretStore(deps.mongo.db, deps.config.secretKey ? new SecretBox(deps.config.secretKey) : undefined);
  const stores = { tenancy: deps.tenancy, keys: deps.keys, webhooks: deps.webhooks, secrets };
  const audit = new AdminAuditLog(deps.mongo.db, deps.config.adminAuditDays);
  // Resolved once per request: the handler authorises with it, the audit entry names it.
  const callers = new WeakMap<RestRequest, Promise<AdminCaller>>();
  const caller = (req: RestRequest) => {
    const known = callers.get(req) ?? adminCaller(deps.keys, req.headers.authorization);
    callers.set(req, known);
    return known;
  };
  /** Writes every call to the audit log: the key's id and kind, never the key; target ids, never bodies' values. */
  const audited = (r: Route): Route => ({
    ...r,
    handler: async (req) => {
      let status = 500;
      try {
        const res: RestResponse = await r.handler(req);
        status = res.status;
        return res;
      } catch (err) {
        status = toRestError(err).status;
        throw err;
      } finally {
        const who = await caller(req).catch(() => undefined);
        const body = (req.body ?? {}) as Record<string, unknown>;
        const named = Object.fromEntries(['id', 'orgId', 'name', 'kind'].filter((k) => typeof body[k] === 'string').map((k) => [k, body[k] as string]));
        await audit
          .record({
            ...(who && { keyId: who.keyId, keyKind: who.kind }),
            method: r.method,
            route: r.path,
            targets: { ...req.params, ...named },
            clientAddress: clientIp(req.remoteAddress, req.headers['x-forwarded-for'], deps.config.trustedProxies),
            status,
          })
          .catch((err: unknown) => deps.log.error({ err }, 'operator API audit entry not written'));
      }
    },
  });
  /** A route on one project: the caller may administer it (else 404) before `run` sees it. */
  const projectRoute = <B = undefined>(r: {
    method: Route['method'];
    path: string;
    summary: string;
    body?: z.ZodType<B>;
    run: (projectId: string, req: RestRequest<B, 'none'>) => Promise<RestResponse>;
  }) =>
    route<B, 'none'>({
      method: r.method,
      path: r.path,
      summary: r.summary,
      auth: 'none',
      ...(r.body && { body: r.body }),
      handler: async (req) => {
        const projectId = req.params.projectId!;
        await visibleProject(deps.tenancy, await caller(req as RestRequest), projectId);
        return r.run(projectId, req);
      },
    });
  return [
    route({
      method: 'GET',
      path: '/v2/admin/audit',
      summary: 'The audit log of the operator API, newest first (`limit`, default 50, and `cursor` from the previous page)',
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
      auth: 'none',
      body: createOrgBody,
      handler: async (req) => {
        requireAllOrgs(await caller(req as RestRequest));
        return json(201, await createOrg(stores, req.body.id));
      },
    }),
    route({
      method: 'GET',
      path: '/v2/admin/orgs',
      summary: 'The organizations the operator key covers (at most 500)',
      auth: 'none',
      handler: async (req) => {
        const who = await caller(req);
        if (who.kind !== 'operator') throw new AppError('permission_denied', 'this operation needs an operator key');
        const orgs = await deps.tenancy.listOrgs(listLimit, who.orgId);
        return { status: 200, body: { orgs: orgs.map((o) => ({ id: o._id, createdAt: o.createdAt })) } };
      },
    }),
    route({
      method: 'GET',
      path: '/v2/admin/projects',
      summary: 'The projects the operator key covers, of one organization with `orgId` (at most 500)',
      auth: 'none',
      handler: async (req) => {
        const who = await caller(req);
        const orgId = req.query.get('orgId') ?? undefined;
        if (orgId !== undefined) requireOrg(who, orgId);
        else if (who.kind !== 'operator') throw new AppError('permission_denied', 'this operation needs an operator key');
        const projects = await deps.tenancy.listProjects(listLimit, orgId ?? (who.kind === 'operator' ? who.orgId : undefined));
        return { status: 200, body: { projects: projects.map(({ _id, ...p }) => ({ id: _id, ...p })) } };
      },
    }),
    route({
      method: 'POST',
      path: '/v2/admin/projects',
      summary: 'Create a project in an organization the operator key covers',
      auth: 'none',
      body: createProjectBody,
      handler: async (req) => {
        requireOrg(await caller(req as RestRequest), req.body.orgId);
        const b = req.body;
        return json(201, await createProject(stores, { projectId: b.id, orgId: b.orgId, repository: b.repository, ref: b.ref, domain: b.domain, allowedOrigins: b.allowedOrigins ?? [] }));
      },
    }),
    route({
      method: 'GET',
      path: '/v2/admin/projects/{projectId}',
      summary: 'A project and its settings',
      auth: 'none',
      handler: async (req) => {
        const project = await visibleProject(deps.tenancy, await caller(req), req.params.projectId!);
        return { status: 200, body: { id: project._id, ...project, _id: undefined } };
      },
    }),
    projectRoute({
      method: 'PATCH',
      path: '/v2/admin/projects/{projectId}',
      summary: "Update a project's sandbox settings (setup, checks, network, allowed hosts, caps, cache keys)",
      body: projectSettingsBody,
      run: async (projectId, req) => json(200, await updateProjectChecks(stores, projectId, req.body)),
    }),
    projectRoute({
      method: 'POST',
      path: '/v2/admin/projects/{projectId}/keys',
      summary: 'Make a project key (admin or assistant); the answer is the only time the key is shown',
      body: createKeyBody,
      run: async (projectId, req) => json(201, await createKey(stores, projectId, req.body.kind, req.body.groups ?? [])),
    }),
    projectRoute({
      method: 'DELETE',
      path: '/v2/admin/projects/{projectId}/keys/{keyId}',
      summary: "Revoke one of the project's keys",
      run: async (projectId, req) => {
        const keyId = req.params.keyId!;
        if (!(await deps.keys.list({ projectId })).some((k) => k.id === keyId)) throw new AppError('not_found', `project ${projectId} has no key ${keyId}`);
        return json(200, await revokeKey(stores, keyId));
      },
    }),
    projectRoute({
      method: 'GET',
      path: '/v2/admin/projects/{projectId}/keys',
      summary: "List the project's keys (never the keys themselves)",
      run: async (projectId) => ({ status: 200, body: { keys: await deps.keys.list({ projectId }) } }),
    }),
    projectRoute({
      method: 'POST',
      path: '/v2/admin/projects/{projectId}/webhooks',
      summary: 'Add a webhook endpoint; the answer shows its signing secret once',
      body: createWebhookBody,
      run: async (projectId, req) => json(201, await createWebhook(stores, projectId, req.body.url, req.body.events)),
    }),
    projectRoute({
      method: 'GET',
      path: '/v2/admin/projects/{projectId}/webhooks',
      summary: "The project's webhook endpoints (never their secrets)",
      run: async (projectId) => ({ status: 200, body: { webhooks: (await listWebhooks(stores, projectId)).json } }),
    }),
    projectRoute({
      method: 'DELETE',
      path: '/v2/admin/projects/{projectId}/webhooks/{webhookId}',
      summary: 'Delete a webhook endpoint',
      run: async (projectId, req) => json(200, await deleteWebhook(stores, projectId, req.params.webhookId!)),
    }),
    projectRoute({
      method: 'GET',
      path: '/v2/admin/projects/{projectId}/webhooks/{webhookId}/deliveries',
      summary: "A webhook endpoint's delivery log, newest first",
      run: async (projectId, req) => ({ status: 200, body: { deliveries: (await webhookDeliveries(stores, projectId, req.params.webhookId!)).json } }),
    }),
    projectRoute({
      method: 'POST',
      path: '/v2/admin/projects/{projectId}/secrets',
      summary: 'Write a project secret (the value is never read back)',
      body: secretBody,
      run: async (projectId, req) => json(200, await setSecret(stores, projectId, req.body.name, req.body.value)),
    }),
    projectRoute({
      method: 'GET',
      path: '/v2/admin/projects/{projectId}/secrets',
      summary: "The names of the project's secrets, never their values",
      run: async (projectId) => ({ status: 200, body: { secrets: (await listSecrets(stores, projectId)).json } }),
    }),
  ].map(audited);
}
