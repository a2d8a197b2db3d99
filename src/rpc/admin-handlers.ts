import { create } from '@bufbuild/protobuf';
import { timestampDate, timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import { type AdminCaller, adminCaller, requireAllOrgs } from '../admin/access';
import { checkKeyUse, isReadingMethod } from '../auth/key-use';
import { addForgeBody, createKeyBody, createOrgBody, createProjectBody, createWebhookBody, followBody, secretBody } from '../admin/admin-bodies';
import { AdminOperations, adminStores, type AuditNote } from '../admin/admin-operations';
import { AdminAuditLog, auditDetails } from '../admin/audit';
import type { AuditDetails } from '../admin/tenancy-operations';
import type { Deps } from '../deps';
import { toRestError } from '../errors';
import {
  type AdminService,
  AuditEntrySchema,
  type DocsSource,
  DocsSourceSchema,
  DocsSyncResultSchema,
  DocsSyncRunSchema,
  DocsCrawlProgressSchema,
  DocsIndexingProgressSchema,
  DocsIngestRunSchema,
  ForgeSchema,
  type Project,
  ProjectKeySchema,
  ProjectSchema,
  WebhookDeliverySchema,
  WebhookSchema,
} from '../gen/admin/v1/admin_pb';
import { type DocsSyncInput, type DocsSyncResult, isSiteSource } from '../../workflows/docs-sync-contract';
import { clientIpKey } from '../limits/client-context';
import type { LastIngest } from '../docs/docs-health';
import type { IndexingProgress } from '../docs/ingest-progress';
import type { DocsSyncRun } from '../docs/sync-runs';
import { parseInput } from '../validate';
import type { MethodAuth } from './caller';

/** Every admin.v1.AdminService method checks its own credential (an operator key, or the project's admin key): src/admin/access.ts. */
export const adminMethodAuth: MethodAuth<typeof AdminService> = {
  createOrganization: 'none',
  listOrganizations: 'none',
  createProject: 'none',
  getProject: 'none',
  listProjects: 'none',
  createKey: 'none',
  listKeys: 'none',
  revokeKey: 'none',
  createWebhook: 'none',
  listWebhooks: 'none',
  deleteWebhook: 'none',
  setSecret: 'none',
  listSecrets: 'none',
  clearSetupCache: 'none',
  listWebhookDeliveries: 'none',
  getDocsStatus: 'none',
  followDocs: 'none',
  unfollowDocs: 'none',
  syncDocs: 'none',
  startDocsSync: 'none',
  getDocsSyncRun: 'none',
  listDocsPages: 'none',
  getDocsPage: 'none',
  listAuditEntries: 'none',
  addForge: 'none',
  listForges: 'none',
  removeForge: 'none',
  rotateForgeWebhookSecret: 'none',
  deleteProject: 'none',
  deleteOrganization: 'none',
};

type Json = Record<string, unknown>;
const ts = (d: unknown) => (d === undefined || d === null ? undefined : timestampFromDate(d instanceof Date ? d : new Date(String(d))));
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

function projectMessage(p: Json): Project {
  return create(ProjectSchema, {
    id: String(p.id),
    orgId: String(p.orgId),
    repository: String(p.repository),
    ref: String(p.ref),
    domain: str(p.domain),
    allowedOrigins: (p.allowedOrigins as string[] | undefined) ?? [],
    setupCommands: (p.setupCommands as string[] | undefined) ?? [],
    checkCommands: (p.checkCommands as string[] | undefined) ?? [],
    sandboxNetwork: p.sandboxNetwork === true,
    createdAt: ts(p.createdAt),
  });
}

const keyMessage = (k: Json) =>
  create(ProjectKeySchema, {
    id: String(k.id),
    kind: String(k.kind),
    domain: str(k.domain),
    groups: (k.groups as string[] | undefined) ?? [],
    createdAt: ts(k.createdAt),
    revokedAt: ts(k.revokedAt),
    createdBy: str(k.createdBy),
    expiresAt: ts(k.expiresAt),
    allowedIps: (k.allowedIps as string[] | undefined) ?? [],
    scope: str(k.scope),
  });

/** A forge connection as REST lists it (src/forges/forge-connection.ts's view): never its token or webhook secret. */
const forgeMessage = (f: Json) =>
  create(ForgeSchema, {
    id: String(f.id),
    orgId: String(f.orgId),
    kind: String(f.kind),
    apiUrl: String(f.apiUrl),
    gitUrl: String(f.gitUrl),
    credential: String(f.credential),
    installationId: typeof f.installationId === 'number' ? BigInt(f.installationId) : undefined,
    webhookUrl: String(f.webhookUrl),
    createdAt: ts(f.createdAt),
  });

const webhookMessage = (w: Json) => create(WebhookSchema, { id: String(w.id), url: String(w.url), events: (w.events as string[] | undefined) ?? [], createdAt: ts(w.createdAt) });

function sourceMessage(input: DocsSyncInput): DocsSource {
  if (isSiteSource(input)) return create(DocsSourceSchema, { sitemap: input.sitemap });
  return create(DocsSourceSchema, { repository: input.repository, ref: input.ref, docsPath: input.docsPath, baseUrl: input.baseUrl });
}

const progressMessage = (p: IndexingProgress | undefined) =>
  p && create(DocsIndexingProgressSchema, { pages: p.pages, pagesDone: p.pagesDone, total: p.total, indexed: p.indexed, embedded: p.embedded });

const ingestMessage = (i: LastIngest | undefined) =>
  i &&
  create(DocsIngestRunSchema, {
    source: i.source,
    startedAt: ts(i.startedAt),
    durationMs: i.durationMs === undefined ? undefined : BigInt(Math.round(i.durationMs)),
    status: i.status,
    pages: i.pages,
    passages: i.passages,
    embedded: i.embedded,
    unchanged: i.unchanged,
    error: i.error,
    progress: progressMessage(i.progress),
  });

const syncRunMessage = (r: DocsSyncRun) =>
  create(DocsSyncRunSchema, {
    id: r.id,
    status: r.status,
    createdAt: ts(r.createdAt),
    startedAt: ts(r.startedAt),
    endedAt: ts(r.endedAt),
    progress: progressMessage(r.progress),
    result: r.result && resultMessage(r.result),
    error: r.error,
    crawl: r.crawl && create(DocsCrawlProgressSchema, { crawled: r.crawl.crawled, pages: r.crawl.pages, errors: r.crawl.errors ?? 0 }),
  });

const resultMessage = (r: DocsSyncResult) =>
  create(DocsSyncResultSchema, {
    commit: r.commit,
    pages: r.pages,
    passages: r.passages,
    pagesReembedded: r.pagesReembedded,
    pagesRemoved: r.pagesRemoved,
    unchanged: r.unchanged,
    fullRebuild: r.fullRebuild,
    errors: r.errors ?? [],
  });

/** The set fields of a message's source, as the REST body names them: unset ones are left out. */
const present = <T extends object>(fields: T) => Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Partial<T>;

// The ids a request names, for its audit entry; never a value (a secret's) or a key.
const targetFields = ['projectId', 'orgId', 'id', 'name', 'kind', 'keyId', 'webhookId', 'domain', 'forgeId'];

/**
 * Connect handlers of admin.v1.AdminService over the operations REST's /v2/admin routes call (src/admin/admin-operations.ts),
 * each call written to the same audit log, with the HTTP status Connect's table gives its outcome.
 */
export function adminHandlers(deps: Deps): ServiceImpl<typeof AdminService> {
  const ops = new AdminOperations(adminStores(deps));
  const audit = new AdminAuditLog(deps.mongo.db, deps.config.adminAuditDays);

  /** Resolves the caller, runs the operation, and writes the audit entry whatever the outcome. */
  const audited =
    <Req extends object, Res>(run: (who: AdminCaller, req: Req, note: AuditNote) => Promise<Res>) =>
    async (req: Req, ctx: HandlerContext): Promise<Res> => {
      const who = adminCaller(deps.keys, ctx.requestHeader.get('authorization') ?? undefined).then((c) => {
        if (c.kind === 'admin') checkKeyUse(c.restrictions, { clientIp: ctx.values.get(clientIpKey), writes: !isReadingMethod(ctx.method.name) });
        return c;
      });
      let status = 200;
      let noted: AuditDetails | undefined;
      try {
        return await run(await who, req, (details) => {
          noted = details;
        });
      } catch (err) {
        status = toRestError(err).status;
        throw err;
      } finally {
        const known = await who.catch(() => undefined);
        const fields = req as Record<string, unknown>;
        const targets = Object.fromEntries(targetFields.filter((k) => typeof fields[k] === 'string' && fields[k] !== '').map((k) => [k, (fields[k] as string).slice(0, 200)]));
        await audit
          .record({
            ...(known && { keyId: known.keyId, keyKind: known.kind }),
            method: 'POST',
            route: `/${ctx.service.typeName}/${ctx.method.name}`,
            targets,
            ...auditDetails(noted),
            clientAddress: ctx.values.get(clientIpKey),
            status,
          })
          .catch((err: unknown) => deps.log.error({ err }, 'operator API audit entry not written'));
      }
    };

  return {
    createOrganization: audited(async (who, req) => {
      const org = await ops.createOrg(who, parseInput(createOrgBody, { id: req.id }).id);
      return { organization: { id: String(org.id), createdAt: ts(org.createdAt) } };
    }),
    listOrganizations: audited(async (who) => ({ organizations: (await ops.listOrgs(who)).map((o) => ({ id: o.id, createdAt: ts(o.createdAt) })) })),
    createProject: audited(async (who, req) => {
      const body = parseInput(createProjectBody, { id: req.id, orgId: req.orgId, repository: req.repository, ref: req.ref, domain: req.domain, allowedOrigins: req.allowedOrigins });
      return { project: projectMessage(await ops.createProject(who, body)) };
    }),
    getProject: audited(async (who, req) => ({ project: projectMessage(await ops.getProject(who, req.projectId)) })),
    listProjects: audited(async (who, req) => ({ projects: (await ops.listProjects(who, req.orgId)).map(projectMessage) })),
    createKey: audited(async (who, req, note) => {
      const body = {
        kind: req.kind,
        ...(req.groups.length && { groups: req.groups }),
        ...(req.expiresAt && { expiresAt: timestampDate(req.expiresAt).toISOString() }),
        ...(req.allowedIps.length && { allowedIps: req.allowedIps }),
        ...(req.scope && { scope: req.scope }),
      };
      const made = await ops.createKey(who, req.projectId, parseInput(createKeyBody, body), note);
      return { info: keyMessage(made), key: String(made.key) };
    }),
    listKeys: audited(async (who, req) => ({ keys: (await ops.listKeys(who, req.projectId)).map((k) => keyMessage(k as unknown as Json)) })),
    revokeKey: audited(async (who, req, note) => {
      await ops.revokeKey(who, req.projectId, req.keyId, { keepMinted: req.keepMinted === true }, note);
      return {};
    }),
    createWebhook: audited(async (who, req) => {
      const made = await ops.createWebhook(who, req.projectId, parseInput(createWebhookBody, { url: req.url, ...(req.events.length && { events: req.events }) }));
      return { webhook: webhookMessage(made), secret: String(made.secret) };
    }),
    listWebhooks: audited(async (who, req) => ({ webhooks: (await ops.listWebhooks(who, req.projectId)).map(webhookMessage) })),
    deleteWebhook: audited(async (who, req) => {
      await ops.deleteWebhook(who, req.projectId, req.webhookId);
      return {};
    }),
    setSecret: audited(async (who, req) => {
      const set = await ops.setSecret(who, req.projectId, parseInput(secretBody, { name: req.name, value: req.value }));
      return { name: String(set.name), updatedAt: ts(set.updatedAt) };
    }),
    listSecrets: audited(async (who, req) => ({ secrets: (await ops.listSecrets(who, req.projectId)).map((x) => ({ name: x.name, updatedAt: ts(x.updatedAt) })) })),
    clearSetupCache: audited(async (who, req) => ({ setupCacheGeneration: (await ops.clearSetupCache(who, req.projectId)).setupCacheGeneration })),
    listWebhookDeliveries: audited(async (who, req) => ({
      deliveries: (await ops.webhookDeliveries(who, req.projectId, req.webhookId)).map((d) =>
        create(WebhookDeliverySchema, {
          messageId: String(d.messageId),
          type: String(d.type),
          attempt: Number(d.attempt),
          at: ts(d.at),
          status: typeof d.status === 'number' ? d.status : undefined,
          ok: d.ok === true,
          durationMs: Number(d.durationMs),
          error: str(d.error),
        }),
      ),
    })),
    getDocsStatus: audited(async (who, req) => {
      const s = await ops.docsStatus(who, req.domain);
      return {
        source: s.source && sourceMessage(s.source),
        everyMs: BigInt(s.everyMs ?? 0),
        lastSuccess: s.lastSuccess && resultMessage(s.lastSuccess),
        lastStartedAt: ts(s.last?.startedAt),
        lastStatus: s.last?.status,
        lastError: s.last?.error,
        running: s.running,
        nextSyncAt: ts(s.nextSyncAt),
        followed: s.followed,
        pages: s.pages,
        passages: s.passages,
        lastIngest: ingestMessage(s.lastIngest),
        progress: progressMessage(s.progress),
      };
    }),
    followDocs: audited(async (who, req) => {
      const src = req.source;
      const body = parseInput(
        followBody,
        present({ repository: src?.repository, ref: src?.ref, docsPath: src?.docsPath, baseUrl: src?.baseUrl, sitemap: src?.sitemap, every: req.every, firstNow: req.firstNow }),
      );
      const followed = await ops.followDocs(who, req.domain, body);
      return { source: sourceMessage(followed.source), everyMs: BigInt(followed.everyMs), firstSyncStarted: followed.firstSyncStarted };
    }),
    unfollowDocs: audited(async (who, req) => {
      await ops.unfollowDocs(who, req.domain);
      return {};
    }),
    syncDocs: audited(async (who, req) => ({ result: resultMessage(await ops.syncDocs(who, req.domain)) })),
    startDocsSync: audited(async (who, req) => ({ run: syncRunMessage(await ops.startDocsSync(who, req.domain)) })),
    getDocsSyncRun: audited(async (who, req) => ({ run: syncRunMessage(await ops.docsSyncRun(who, req.domain, req.id)) })),
    listDocsPages: audited(async (who, req) => ops.docsPages(who, req.domain, { limit: req.limit, after: req.after })),
    getDocsPage: audited(async (who, req) => ops.docsPage(who, req.domain, req.path)),
    listAuditEntries: audited(async (who, req) => {
      requireAllOrgs(who);
      const page = await audit.list(req.limit ?? 50, req.cursor);
      return {
        entries: page.entries.map(({ changes, createdKey, revokedKeys, ...e }) =>
          create(AuditEntrySchema, {
            ...e,
            at: ts(e.at),
            changes: Object.entries(changes ?? {}).map(([field, c]) => ({ field, oldJson: JSON.stringify(c.old ?? null), newJson: JSON.stringify(c.new ?? null) })),
            createdKeyId: createdKey?.id,
            createdKeyKind: createdKey?.kind,
            revokedKeyIds: revokedKeys ?? [],
          }),
        ),
        nextCursor: page.next,
      };
    }),
    addForge: audited(async (who, req) => {
      const installationId = req.appInstallationId === undefined ? undefined : Number(req.appInstallationId);
      const body = parseInput(addForgeBody, present({ kind: req.kind, baseUrl: req.baseUrl, apiUrl: req.apiUrl, gitUrl: req.gitUrl, token: req.token, appInstallationId: installationId }));
      const made = await ops.addForge(who, req.orgId, body);
      return { forge: forgeMessage(made), webhookSecret: String(made.webhookSecret) };
    }),
    listForges: audited(async (who, req) => ({ forges: (await ops.listForges(who, req.orgId)).map(forgeMessage) })),
    removeForge: audited(async (who, req) => {
      await ops.removeForge(who, req.orgId, req.forgeId);
      return {};
    }),
    rotateForgeWebhookSecret: audited(async (who, req) => {
      const r = await ops.rotateForgeWebhookSecret(who, req.orgId, req.forgeId);
      return { id: String(r.id), webhookUrl: String(r.webhookUrl), webhookSecret: String(r.webhookSecret) };
    }),
    deleteProject: audited(async (who, req, note) => {
      const r = await ops.deleteProject(who, req.projectId, note);
      const ids = (k: string) => (r[k] as string[]).map(String);
      return { automationIds: ids('automations'), webhookIds: ids('webhooks'), secretNames: ids('secrets'), revokedKeyIds: ids('revokedKeys') };
    }),
    deleteOrganization: audited(async (who, req, note) => {
      const r = await ops.deleteOrg(who, req.id, note);
      return { forgeIds: (r.forges as string[]).map(String), revokedKeyIds: (r.revokedKeys as string[]).map(String) };
    }),
  };
}
