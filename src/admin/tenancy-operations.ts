import type { ApiKeyStore, KeyInfo, KeyKind } from '../auth/api-keys';
import type { KeyScope } from '../auth/key-use';
import { AppError } from '../errors';
import type { RepositoryGate } from '../forges/repository-gate';
import type { SettingsLevel } from '../tenancy/settings-levels';
import { projectCaps, type ProjectChecksUpdate, type ProjectDoc, type SettingChange, type TenancyStore } from '../tenancy/store';

/** What the audit log records of a change beyond its route and targets (src/admin/audit.ts): never a key or a secret's value. */
export interface AuditDetails {
  /** Each setting the change moved, by its stored name: the value before and after. */
  changes?: Record<string, SettingChange>;
  /** The key the call made. */
  createdKey?: { id: string; kind: string };
  /** The keys the call revoked: the one named, then those made with it. */
  revokedKeys?: string[];
}

/** What a command prints: `text` for people, `json` for scripts (--json); `note` goes to stderr in text mode. */
export interface Output {
  text: string;
  json: unknown;
  note?: string;
  /** What the operator API's audit entry adds about the change. */
  audit?: AuditDetails;
}

export interface Stores {
  tenancy: TenancyStore;
  keys: ApiKeyStore;
}

/** Creating a project also asks which forge connection of the organization reaches its repository (src/forges/repository-gate.ts). */
export interface ProjectStores extends Stores {
  gate: RepositoryGate;
}

export async function createOrg(s: Stores, orgId: string): Promise<Output> {
  const org = await s.tenancy.createOrg(orgId);
  return { text: `created organization ${org._id}`, json: { id: org._id, createdAt: org.createdAt } };
}

export async function createProject(s: ProjectStores, p: { projectId: string; orgId: string; repository: string; ref: string; domain: string; allowedOrigins: string[] }): Promise<Output> {
  if (!(await s.tenancy.hasOrg(p.orgId))) throw new AppError('not_found', `organization ${p.orgId} not found`);
  const { forgeId } = await s.gate.resolve(p.orgId, p.repository, 'write');
  const doc = await s.tenancy.createProject({ _id: p.projectId, orgId: p.orgId, repository: p.repository, forgeId, ref: p.ref, domain: p.domain, allowedOrigins: p.allowedOrigins });
  // Where the connection's token may (Gitea), the repository's events are sent to docent without a manual step.
  const webhookRegistered = await s.gate.forges.registerWebhook(forgeId, p.repository);
  const origins = doc.allowedOrigins.length ? doc.allowedOrigins.join(', ') : 'none (only pages the gateway serves itself, such as /playground/, can call the assistant from a browser)';
  return {
    text: `created project ${doc._id} in ${doc.orgId}: ${doc.repository} at ${doc.ref}, documentation domain ${doc.domain}, allowed origins: ${origins}${webhookRegistered ? "; the repository's webhook to docent is set" : ''}`,
    json: {
      id: doc._id,
      orgId: doc.orgId,
      repository: doc.repository,
      forgeId: doc.forgeId,
      ref: doc.ref,
      domain: doc.domain,
      allowedOrigins: doc.allowedOrigins,
      createdAt: doc.createdAt,
      ...(webhookRegistered ? { webhookRegistered } : {}),
    },
  };
}

/**
 * Points a project at another repository, base ref or documentation domain. A new repository resolves through the
 * organization's connections as at create; a new domain takes the project's assistant keys with it. Jobs keep the
 * source they started with; the old domain's documentation stays where it was (ingest or follow the new one).
 */
export async function moveProjectSource(s: ProjectStores, project: ProjectDoc, source: { repository?: string; ref?: string; domain?: string }): Promise<Output> {
  const forgeId = source.repository !== undefined ? (await s.gate.resolve(project.orgId, source.repository, 'write')).forgeId : undefined;
  const { before, after } = await s.tenancy.updateSource(project._id, { ...source, ...(forgeId !== undefined && { forgeId }) });
  if (after.domain && after.domain !== before.domain) await s.keys.moveToDomain(project._id, after.domain);
  const webhookRegistered = after.repository !== before.repository ? await s.gate.forges.registerWebhook(after.forgeId ?? forgeId!, after.repository) : false;
  const changes: Record<string, SettingChange> = {};
  for (const f of ['repository', 'ref', 'domain'] as const) if (before[f] !== after[f]) changes[f] = { old: before[f] ?? null, new: after[f] ?? null };
  return {
    text: `project ${after._id}: ${after.repository} at ${after.ref}, documentation domain ${after.domain ?? 'none'}`,
    json: { repository: after.repository, ref: after.ref, domain: after.domain ?? null, ...(webhookRegistered ? { webhookRegistered } : {}) },
    audit: { changes },
  };
}

function describeChecks(p: ProjectDoc): string {
  const list = (label: string, commands: string[] | undefined) => `${label}: ${commands?.length ? commands.map((c) => `"${c}"`).join(', ') : 'none'}`;
  const caps = Object.entries(projectCaps(p)).map(([k, v]) => `${k} ${v}`);
  return [
    list('setup', p.setupCommands),
    list('checks', p.checkCommands),
    `network: ${p.sandboxNetwork ? 'on' : 'off'}`,
    ...(p.sandboxAllowHosts?.length ? [`allowed hosts: ${p.sandboxAllowHosts.join(', ')}`] : []),
    ...(p.secretsToChecks ? ['secrets to checks: on'] : []),
    ...(p.secretsForAgentCode ? ['secrets on agent code: on'] : []),
    ...(p.setupCacheKeyFiles?.length ? [`setup cache keyed by: ${p.setupCacheKeyFiles.join(', ')}`, list('maintenance', p.maintenanceCommands)] : []),
    ...(caps.length ? [`caps: ${caps.join(', ')}`] : []),
    ...(p.fairnessWeight !== undefined ? [`fairness weight: ${p.fairnessWeight}`] : []),
  ].join('; ');
}

export const secretsOnAgentCodeWarning =
  "warning: follow-up turns start from commits the agent made; with --secrets-on-agent-code on, code the model wrote (a package.json script, a test) runs with the project's secrets, and a PR commenter who steers the agent can have it print or send them";

/** Changes a project's settings at the caller's level: a project admin key may only tighten the operator's (src/tenancy/settings-levels.ts). */
export async function updateProjectChecks(s: Stores, projectId: string, update: ProjectChecksUpdate, level: SettingsLevel = 'operator'): Promise<Output> {
  const { project: p, changes } = await s.tenancy.updateSettings(projectId, update, level);
  return {
    audit: { changes },
    text: `updated project ${p._id}: ${describeChecks(p)}${update.allowedOrigins ? `; allowed origins: ${p.allowedOrigins.join(', ') || 'none'}` : ''}`,
    ...(update.secretsForAgentCode ? { note: secretsOnAgentCodeWarning } : {}),
    json: {
      id: p._id,
      setupCommands: p.setupCommands ?? [],
      checkCommands: p.checkCommands ?? [],
      sandboxNetwork: p.sandboxNetwork ?? false,
      sandboxAllowHosts: p.sandboxAllowHosts ?? [],
      ...(p.secretsToChecks ? { secretsToChecks: true } : {}),
      ...(p.secretsForAgentCode ? { secretsForAgentCode: true } : {}),
      ...(p.setupCacheKeyFiles?.length ? { setupCacheKeyFiles: p.setupCacheKeyFiles } : {}),
      ...(p.maintenanceCommands?.length ? { maintenanceCommands: p.maintenanceCommands } : {}),
      ...(Object.keys(projectCaps(p)).length ? { caps: projectCaps(p) } : {}),
      ...(p.fairnessWeight !== undefined ? { fairnessWeight: p.fairnessWeight } : {}),
      allowedOrigins: p.allowedOrigins,
    },
  };
}

/** `project cache clear`: one database write; each worker's entries for the project stop matching at once. */
export async function clearProjectSetupCache(s: Stores, projectId: string): Promise<Output> {
  const generation = await s.tenancy.clearSetupCache(projectId);
  return {
    text: `cleared the setup cache of project ${projectId}: its next job on each worker runs setup again (cache generation ${generation})`,
    json: { id: projectId, setupCacheGeneration: generation },
  };
}

/**
 * Admin keys are bound to the project, assistant keys to its documentation domain; `groups` lets an assistant key see
 * the pages restricted to those groups. The key is shown only here.
 */
export async function createKey(
  s: Stores,
  projectId: string,
  kind: KeyKind,
  groups: string[] = [],
  createdBy?: string,
  restrictions: { expiresAt?: Date; allowedIps?: string[]; scope?: KeyScope } = {},
): Promise<Output> {
  const project = await s.tenancy.getProject(projectId);
  if (!project) throw new AppError('not_found', `project ${projectId} not found`);
  if (kind === 'assistant' && !project.domain) throw new AppError('failed_precondition', `project ${projectId} has no documentation domain, so it cannot have assistant keys`);
  const spec = {
    kind,
    orgId: project.orgId,
    projectId,
    ...(kind === 'assistant' && { domain: project.domain }),
    ...(groups.length && { groups: [...new Set(groups)] }),
    ...(createdBy !== undefined && { createdBy }),
    ...restrictions,
  };
  const { id, key } = await s.keys.create(spec);
  const boundTo = kind === 'assistant' ? `domain ${project.domain}` : `project ${projectId}`;
  const sees = spec.groups ? `; it also sees pages for ${spec.groups.join(', ')}` : '';
  const limits = [
    restrictions.scope === 'read' && 'read-only',
    restrictions.expiresAt && `expires ${restrictions.expiresAt.toISOString()}`,
    restrictions.allowedIps?.length && `only from ${restrictions.allowedIps.join(', ')}`,
  ].filter(Boolean);
  return {
    text: key,
    note: `created ${kind} key ${id} for ${boundTo}${sees}${limits.length ? ` (${limits.join('; ')})` : ''}; it is shown only once, store it now`,
    json: { id, key, ...spec },
    audit: { createdKey: { id, kind } },
  };
}

/** Revokes a key and, unless `keepMinted`, every key made with it (and with those); the answer lists the others. */
export async function revokeKey(s: Stores, keyId: string, opts: { keepMinted?: boolean } = {}): Promise<Output> {
  const revoked = await s.keys.revokeWithMinted(keyId, opts);
  if (!revoked) throw new AppError('not_found', `no active key ${keyId}`);
  const minted = revoked.slice(1);
  return {
    text: minted.length ? `revoked key ${keyId} and the keys made with it: ${minted.join(', ')}` : `revoked key ${keyId}`,
    json: { id: keyId, revoked: true, alsoRevoked: minted },
    audit: { revokedKeys: revoked },
  };
}

const statusOf = (k: KeyInfo, now: Date) => (k.revokedAt ? 'revoked' : k.expiresAt && k.expiresAt <= now ? 'expired' : 'active');
const day = (d?: Date) => (d ? d.toISOString().slice(0, 16).replace('T', ' ') : '-');

export async function listKeys(s: Stores, projectId: string): Promise<Output> {
  if (!(await s.tenancy.getProject(projectId))) throw new AppError('not_found', `project ${projectId} not found`);
  const keys = await s.keys.list({ projectId });
  const now = new Date();
  const rows = [
    ['ID', 'KIND', 'STATUS', 'BOUND TO', 'CREATED', 'LAST USED', 'GROUPS', 'MADE BY'],
    ...keys.map((k) => [k.id, k.kind, statusOf(k, now), k.domain ?? k.projectId ?? '-', day(k.createdAt), day(k.lastUsedAt), k.groups?.join(',') ?? '-', k.createdBy ?? '-']),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const text = keys.length
    ? rows
        .map((r) =>
          r
            .map((c, i) => c.padEnd(widths[i]!))
            .join('  ')
            .trimEnd(),
        )
        .join('\n')
    : `project ${projectId} has no keys`;
  return { text, json: keys.map((k) => ({ ...k, status: statusOf(k, now) })) };
}
