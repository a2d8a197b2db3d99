import { z } from 'zod';
import { forgeKinds } from '../forges/forge-connection';
import { documentedSchemas } from './response-schemas';

// Response bodies of the operator API (/v2/admin): /openapi.json describes them and each answer is encoded through
// them. Loose objects where the stored document may gain fields (a project's settings), exact ones elsewhere.

const at = z.iso.datetime();

export const orgBody = z.object({ id: z.string(), createdAt: at }).register(documentedSchemas, { id: 'AdminOrg' });
export const orgListBody = z.object({ orgs: z.array(orgBody) });

export const projectBody = z
  .looseObject({
    id: z.string(),
    orgId: z.string(),
    repository: z.string(),
    ref: z.string(),
    domain: z.string().optional(),
    allowedOrigins: z.array(z.string()),
    createdAt: at.optional(),
  })
  .describe('The project and its sandbox settings (setupCommands, checkCommands, sandboxNetwork, sandboxAllowHosts, caps, cache keys…)')
  .register(documentedSchemas, { id: 'AdminProject' });
export const projectListBody = z.object({ projects: z.array(projectBody) });

const keyFields = {
  id: z.string(),
  kind: z.enum(['admin', 'assistant']),
  orgId: z.string(),
  projectId: z.string(),
  domain: z.string().optional(),
  groups: z.array(z.string()).optional(),
  createdBy: z.string().optional().describe('The id of the key that made it; revoking that key revokes this one too unless keepMinted=true'),
  expiresAt: at.optional().describe('After it the key is refused (401)'),
  allowedIps: z.array(z.string()).optional().describe('Addresses and networks the key may be used from (others: 403)'),
  scope: z.enum(['read', 'write']).optional().describe('Admin keys: read may only read (GET; Connect Get/List/Watch), others are 403'),
};
export const createdKeyBody = z.object({ ...keyFields, key: z.string().describe('The key itself: shown only in this answer') }).register(documentedSchemas, { id: 'AdminCreatedKey' });
export const keyListBody = z.object({
  keys: z.array(
    z.looseObject({
      id: z.string(),
      kind: z.string(),
      createdAt: at.optional(),
      lastUsedAt: at.optional(),
      revokedAt: at.optional(),
      expiresAt: at.optional(),
      allowedIps: z.array(z.string()).optional(),
      scope: z.enum(['read', 'write']).optional(),
    }),
  ),
});
export const revokedKeyBody = z.object({
  id: z.string(),
  revoked: z.literal(true),
  alsoRevoked: z.array(z.string()).describe('The keys made with it (and with those) that were revoked with it; empty with keepMinted=true'),
});

export const secretSetBody = z.object({ projectId: z.string(), name: z.string(), updatedAt: at });
export const secretListBody = z.object({ secrets: z.array(z.object({ name: z.string(), updatedAt: at })) });

export const cacheClearedBody = z.object({ id: z.string(), setupCacheGeneration: z.number().int().describe('Workers ignore setup cache entries of older generations') });

const docsSource = z.union([
  z.object({ domain: z.string(), repository: z.string(), ref: z.string(), docsPath: z.string(), baseUrl: z.string().optional() }),
  z.object({ domain: z.string(), sitemap: z.string() }),
]);
export const followedBody = z.object({ domain: z.string(), source: docsSource, everyMs: z.number().int(), firstSyncStarted: z.boolean() });
export const unfollowedBody = z.object({ domain: z.string(), followed: z.literal(false) });
export const docsSyncResultBody = z
  .looseObject({
    domain: z.string(),
    commit: z.string(),
    pages: z.number().int(),
    passages: z.number().int(),
    unchanged: z.boolean(),
    fullRebuild: z.boolean(),
    errors: z.array(z.string()).optional(),
  })
  .register(documentedSchemas, { id: 'DocsSyncResult' });
const indexingProgress = z.looseObject({
  phase: z.literal('indexing'),
  pages: z.number().int(),
  pagesDone: z.number().int(),
  total: z.number().int(),
  indexed: z.number().int(),
  embedded: z.number().int(),
});
export const docsStatusBody = z
  .object({
    domain: z.string(),
    followed: z.boolean().describe('Whether a schedule follows a repository or a site; source, everyMs, last… are there only then'),
    pages: z.number().int().describe('Pages served now'),
    passages: z.number().int().describe('Passages served now'),
    index: z.string().optional().describe('The index the domain serves'),
    lastIngest: z
      .object({
        workflowId: z.string(),
        source: z.string(),
        startedAt: at,
        durationMs: z.number().optional(),
        status: z.string(),
        pages: z.number().int().optional(),
        passages: z.number().int().optional(),
        embedded: z.number().int().optional(),
        unchanged: z.boolean().optional(),
        error: z.string().optional(),
        phase: z.string().optional(),
        progress: indexingProgress.optional(),
      })
      .optional()
      .describe('The newest one-off ingest (`docent docs ingest`), while Temporal keeps it'),
    source: docsSource.optional(),
    everyMs: z.number().int().optional(),
    lastSuccess: docsSyncResultBody.optional(),
    last: z.object({ workflowId: z.string(), startedAt: at, durationMs: z.number().optional(), status: z.string(), error: z.string().optional() }).optional(),
    running: z.boolean(),
    progress: indexingProgress.optional(),
    nextSyncAt: at.optional(),
  })
  .register(documentedSchemas, { id: 'DocsSyncStatus' });
export const docsPagesBody = z.object({
  pages: z.array(z.object({ path: z.string(), title: z.string(), url: z.string(), passages: z.number().int(), groups: z.array(z.string()).optional() })),
  next: z.string().optional().describe('Give it as `after` for the next pages; absent on the last'),
});
export const docsPageBody = z.object({
  path: z.string(),
  title: z.string(),
  passages: z.array(z.object({ anchor: z.string().optional(), headings: z.array(z.string()), text: z.string(), url: z.string() })),
});
export const docsSyncRunBody = z
  .object({
    id: z.string(),
    domain: z.string(),
    status: z.enum(['queued', 'in_progress', 'success', 'failure']),
    createdAt: at,
    startedAt: at.optional(),
    endedAt: at.optional(),
    durationMs: z.number().optional(),
    progress: indexingProgress.optional(),
    crawl: z
      .object({ phase: z.literal('crawling'), crawled: z.number().int(), pages: z.number().int(), errors: z.number().int().optional() })
      .optional()
      .describe("A site's crawl: pages fetched so far"),
    result: docsSyncResultBody.optional(),
    error: z.string().optional(),
  })
  .register(documentedSchemas, { id: 'DocsSyncRun' });

export const auditPageBody = z
  .object({
    entries: z.array(
      z.object({
        id: z.string(),
        at,
        keyId: z.string().optional().describe("The caller's key id (never the key); absent when no valid key was sent"),
        keyKind: z.enum(['operator', 'admin', 'assistant']).optional(),
        method: z.string(),
        route: z.string().describe('The path template, or the Connect method'),
        targets: z.record(z.string(), z.string()),
        clientAddress: z.string(),
        status: z.number().int(),
        changes: z
          .record(z.string(), z.object({ old: z.unknown(), new: z.unknown() }))
          .optional()
          .describe('For a settings change: each setting it moved, by its stored name, with its values before and after (null: unset)'),
        createdKey: z.object({ id: z.string(), kind: z.string() }).optional().describe('For a call that made a key: its id and kind (never the key)'),
        revokedKeys: z.array(z.string()).optional().describe('For a revocation: the keys revoked, the one named first, then those made with it'),
      }),
    ),
    next: z.string().optional().describe('The cursor of the next page'),
  })
  .register(documentedSchemas, { id: 'AdminAuditPage' });

export const projectSettingsBody = z
  .looseObject({
    id: z.string(),
    setupCommands: z.array(z.string()),
    checkCommands: z.array(z.string()),
    sandboxNetwork: z.boolean(),
    sandboxAllowHosts: z.array(z.string()),
    allowedOrigins: z.array(z.string()).describe('The origins whose pages may call the assistant from a browser'),
    repository: z.string().optional().describe('When the call changed the repository, base ref or domain: the repository now'),
    ref: z.string().optional(),
    domain: z.string().nullable().optional(),
  })
  .describe('The sandbox settings as updated (also secretsToChecks, secretsForAgentCode, setupCacheKeyFiles, maintenanceCommands, caps when set)')
  .register(documentedSchemas, { id: 'AdminProjectSettings' });

export const deletedProjectBody = z
  .object({
    id: z.string(),
    deleted: z.literal(true),
    automations: z.array(z.string()).describe('The automations deleted with it (their schedules and runs too)'),
    webhooks: z.array(z.string()).describe('The webhook endpoints deleted'),
    secrets: z.array(z.string()).describe('The names of the secrets deleted'),
    revokedKeys: z.array(z.string()).describe("The project's keys, revoked"),
  })
  .register(documentedSchemas, { id: 'AdminDeletedProject' });

export const deletedOrgBody = z
  .object({
    id: z.string(),
    deleted: z.literal(true),
    forges: z.array(z.string()).describe('The forge connections removed'),
    revokedKeys: z.array(z.string()).describe("The organization's operator keys, revoked"),
  })
  .register(documentedSchemas, { id: 'AdminDeletedOrg' });

export const githubWebhookSecretBody = z.object({
  projectId: z.string(),
  repository: z.string().describe('owner/name, whose webhook to <gateway>/github/webhook takes the secret'),
  secret: z.string().describe('Shown only in this answer; the previous one no longer verifies'),
});

const forgeFields = {
  id: z.string(),
  kind: z.enum(forgeKinds),
  orgId: z.string(),
  apiUrl: z.string().describe("The forge's REST API"),
  gitUrl: z.string().describe('Where owner/name repositories are cloned from: the only host the credential is sent to'),
  credential: z.enum(['token', 'app']).describe("A token (never shown again), or an installation of the deployment's GitHub App"),
  installationId: z.number().int().optional().describe("The App installation, for credential 'app'"),
  webhookUrl: z.string().describe("Where the forge sends this connection's webhooks"),
  createdAt: at,
};
const webhookSecret = z.string().describe('Verifies the webhooks the forge sends to webhookUrl: shown only in this answer');
export const forgeBody = z.object(forgeFields).describe('A forge connection, never its token or its webhook secret').register(documentedSchemas, { id: 'AdminForge' });
export const addedForgeBody = z.object({ ...forgeFields, webhookSecret }).register(documentedSchemas, { id: 'AdminAddedForge' });
export const forgeListBody = z.object({ forges: z.array(forgeBody) });
export const rotatedForgeSecretBody = z.object({ id: z.string(), webhookUrl: z.string(), webhookSecret: webhookSecret.describe('Shown only in this answer; the previous one no longer verifies') });
