// The operator API as the CLI calls it when DOCENT_OPERATOR_KEY is set: no database settings needed on this machine.
import { AppError, type ErrorCode } from '../errors';
import type { Output } from '../admin/tenancy-operations';
import type { FollowRequest } from '../docs/follow-input';
import type { DocsHealth } from '../docs/docs-health';
import type { DocsSyncResult } from '../../workflows/docs-sync-contract';
import { type CrawlProgress, describeCrawl, describeIndexing, type IndexingProgress } from '../docs/ingest-progress';

/** What POST and GET …/syncs answer (src/docs/sync-runs.ts), as JSON. */
interface DocsSyncRunAnswer {
  id: string;
  status: 'queued' | 'in_progress' | 'success' | 'failure';
  progress?: IndexingProgress;
  crawl?: CrawlProgress;
  result?: DocsSyncResult;
  error?: string;
}

type Json = Record<string, unknown>;

/** The operator key to call the API with, if the environment gives one (then the CLI does not touch the database). */
export const operatorKeyFromEnv = (): string | undefined => process.env.DOCENT_OPERATOR_KEY?.trim() || undefined;

/** How often a started sync is asked where it is. */
const followEveryMs = 1000;

export class AdminApi {
  private readonly base: string;
  constructor(
    private readonly key: string,
    base = process.env.DOCENT_API_URL ?? `http://127.0.0.1:${process.env.DOCENT_HTTP_PORT ?? '8080'}`,
    /** DOCENT_API_REQUEST_TIMEOUT_MS: each call's bound (the default is Node's own five-minute wait for an answer). */
    private readonly requestTimeoutMs = 300_000,
  ) {
    this.base = base.replace(/\/+$/, '');
  }

  /** One call; an answer in the error shape becomes the AppError it describes, so the CLI prints it as it does today. */
  async call(method: string, path: string, body?: unknown): Promise<Json> {
    const res = await fetch(`${this.base}${path}`, {
      method,
      signal: AbortSignal.timeout(this.requestTimeoutMs),
      headers: { authorization: `Bearer ${this.key}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    }).catch((err: unknown) => {
      const why =
        err instanceof Error && err.name === 'TimeoutError' ? `no answer within ${this.requestTimeoutMs} ms (DOCENT_API_REQUEST_TIMEOUT_MS)` : err instanceof Error ? err.message : String(err);
      throw new AppError('unavailable', `cannot reach the operator API at ${this.base} (DOCENT_API_URL): ${why}`);
    });
    const answer = (await res.json().catch(() => ({}))) as Json;
    if (!res.ok) throw new AppError((answer.code as ErrorCode | undefined) ?? 'internal', String(answer.error ?? `the operator API answered ${res.status}`));
    return answer;
  }

  async createOrg(orgId: string): Promise<Output> {
    const org = await this.call('POST', '/v2/admin/orgs', { id: orgId });
    return { text: `created organization ${org.id}`, json: org };
  }

  async createProject(p: { projectId: string; orgId: string; repository: string; ref: string; domain: string; allowedOrigins: string[] }): Promise<Output> {
    const doc = await this.call('POST', '/v2/admin/projects', { id: p.projectId, orgId: p.orgId, repository: p.repository, ref: p.ref, domain: p.domain, allowedOrigins: p.allowedOrigins });
    return { text: `created project ${doc.id} in ${doc.orgId}: ${doc.repository} at ${doc.ref}, documentation domain ${doc.domain}`, json: doc };
  }

  async updateProject(projectId: string, update: unknown): Promise<Output> {
    const doc = await this.call('PATCH', `/v2/admin/projects/${encodeURIComponent(projectId)}`, update);
    return { text: `updated project ${doc.id}`, json: doc };
  }

  async deleteProject(projectId: string): Promise<Output> {
    const r = await this.call('DELETE', `/v2/admin/projects/${encodeURIComponent(projectId)}`);
    const n = (k: string) => (r[k] as unknown[]).length;
    return { text: `deleted project ${projectId}: revoked ${n('revokedKeys')} keys, deleted ${n('automations')} automations, ${n('webhooks')} webhook endpoints and ${n('secrets')} secrets`, json: r };
  }

  async deleteOrg(orgId: string): Promise<Output> {
    const r = await this.call('DELETE', `/v2/admin/orgs/${encodeURIComponent(orgId)}`);
    return { text: `deleted organization ${orgId}: removed ${(r.forges as unknown[]).length} forge connections, revoked ${(r.revokedKeys as unknown[]).length} operator keys`, json: r };
  }

  async createKey(projectId: string, kind: string, groups: string[], restrictions: { expiresAt?: string; allowedIps?: string[]; scope?: string } = {}): Promise<Output> {
    const made = await this.call('POST', `/v2/admin/projects/${encodeURIComponent(projectId)}/keys`, { kind, ...(groups.length && { groups }), ...restrictions });
    return { text: String(made.key), note: `created ${kind} key ${made.id} for project ${projectId}; it is shown only once, store it now`, json: made };
  }

  async revokeKey(projectId: string, keyId: string, keepMinted = false): Promise<Output> {
    const r = await this.call('DELETE', `/v2/admin/projects/${encodeURIComponent(projectId)}/keys/${encodeURIComponent(keyId)}${keepMinted ? '?keepMinted=true' : ''}`);
    const also = (r.alsoRevoked as string[] | undefined) ?? [];
    return { text: also.length ? `revoked key ${keyId} and the keys made with it: ${also.join(', ')}` : `revoked key ${keyId}`, json: r };
  }

  async createWebhook(projectId: string, url: string, events?: string[]): Promise<Output> {
    const made = await this.call('POST', `/v2/admin/projects/${encodeURIComponent(projectId)}/webhooks`, { url, ...(events && { events }) });
    return { text: String(made.secret), note: `created webhook ${made.id} for ${made.url}; its signing secret is shown only once, store it now`, json: made };
  }

  async listWebhooks(projectId: string): Promise<Output> {
    const list = (await this.call('GET', `/v2/admin/projects/${encodeURIComponent(projectId)}/webhooks`)).webhooks as Json[];
    const text = list.length ? list.map((e) => `${e.id}  ${e.url}  ${(e.events as string[]).join(',')}`).join('\n') : `project ${projectId} has no webhooks`;
    return { text, json: list };
  }

  async deleteWebhook(projectId: string, webhookId: string): Promise<Output> {
    const r = await this.call('DELETE', `/v2/admin/projects/${encodeURIComponent(projectId)}/webhooks/${encodeURIComponent(webhookId)}`);
    return { text: `deleted webhook ${webhookId}`, json: r };
  }

  /** The docs commands' operations on a domain (the gateway checks the follow request as the CLI would). */
  docs() {
    const at = (domain: string) => `/v2/admin/docs/${encodeURIComponent(domain)}`;
    return {
      follow: async ({ domain, ...rest }: FollowRequest, firstNow: boolean) => {
        await this.call('POST', `${at(domain)}/follow`, { ...rest, firstNow });
      },
      /** Starts the sync, which answers at once with its id, then asks where it is until it ends: no call lasts the sync's length. */
      sync: async (domain: string, print: (line: string) => void = () => undefined): Promise<DocsSyncResult> => {
        const started = (await this.call('POST', `${at(domain)}/syncs`)) as unknown as DocsSyncRunAnswer;
        print(`sync ${started.id} queued`);
        let last = '';
        for (;;) {
          const run = (await this.call('GET', `${at(domain)}/syncs/${encodeURIComponent(started.id)}`)) as unknown as DocsSyncRunAnswer;
          if (run.status === 'success') return run.result!;
          if (run.status === 'failure') throw new AppError('failed_precondition', `sync failed: ${run.error ?? 'no reason given'}`);
          const line = run.status === 'queued' ? 'queued behind the sync that is running' : run.progress ? describeIndexing(run.progress) : run.crawl ? describeCrawl(run.crawl) : 'syncing';
          if (line !== last) {
            last = line;
            print(line);
          }
          await new Promise((r) => setTimeout(r, followEveryMs));
        }
      },
      unfollow: async (domain: string) => {
        await this.call('DELETE', `${at(domain)}/follow`);
      },
      status: async (domain: string): Promise<DocsHealth> => {
        const s = (await this.call('GET', at(domain))) as unknown as DocsHealth & { last?: { startedAt: string }; nextSyncAt?: string; lastIngest?: { startedAt: string } };
        const date = (v: string | Date | undefined) => (v === undefined ? undefined : new Date(v));
        return {
          ...s,
          ...(s.last && { last: { ...s.last, startedAt: date(s.last.startedAt)! } }),
          ...(s.nextSyncAt && { nextSyncAt: date(s.nextSyncAt) }),
          ...(s.lastIngest && { lastIngest: { ...s.lastIngest, startedAt: date(s.lastIngest.startedAt)! } }),
        } as DocsHealth;
      },
    };
  }

  async clearCache(projectId: string): Promise<Output> {
    const r = await this.call('POST', `/v2/admin/projects/${encodeURIComponent(projectId)}/cache/clear`);
    return { text: `cleared the setup cache of project ${projectId}: its next job on each worker runs setup again (cache generation ${r.setupCacheGeneration})`, json: r };
  }

  async listKeys(projectId: string): Promise<Output> {
    const keys = (await this.call('GET', `/v2/admin/projects/${encodeURIComponent(projectId)}/keys`)).keys as Json[];
    const status = (k: Json) => (k.revokedAt ? 'revoked' : k.expiresAt && String(k.expiresAt) <= new Date().toISOString() ? 'expired' : 'active');
    const limits = (k: Json) =>
      [
        k.scope === 'read' && 'read-only',
        k.expiresAt && `expires ${String(k.expiresAt).slice(0, 16).replace('T', ' ')}`,
        (k.allowedIps as string[] | undefined)?.length && `from ${(k.allowedIps as string[]).join(',')}`,
      ]
        .filter(Boolean)
        .join('  ');
    const text = keys.length
      ? keys.map((k) => `${k.id}  ${k.kind}  ${status(k)}  ${k.domain ?? k.projectId ?? '-'}${limits(k) ? `  ${limits(k)}` : ''}`).join('\n')
      : `project ${projectId} has no keys`;
    return { text, json: keys };
  }

  async setSecret(projectId: string, name: string, value: string): Promise<Output> {
    const r = await this.call('POST', `/v2/admin/projects/${encodeURIComponent(projectId)}/secrets`, { name, value });
    return { text: `set secret ${name} of project ${projectId}`, json: r };
  }

  async listSecrets(projectId: string): Promise<Output> {
    const list = (await this.call('GET', `/v2/admin/projects/${encodeURIComponent(projectId)}/secrets`)).secrets as Json[];
    const when = (at: unknown) => String(at).slice(0, 16).replace('T', ' ');
    return { text: list.length ? list.map((x) => `${x.name}  set ${when(x.updatedAt)}`).join('\n') : `project ${projectId} has no secrets`, json: list };
  }

  async webhookDeliveries(projectId: string, webhookId: string): Promise<Output> {
    const list = (await this.call('GET', `/v2/admin/projects/${encodeURIComponent(projectId)}/webhooks/${encodeURIComponent(webhookId)}/deliveries`)).deliveries as Json[];
    const line = (d: Json) => `${d.at}  ${d.messageId}  ${d.type}  attempt ${d.attempt}  ${d.status ?? '-'}  ${d.ok ? 'ok' : (d.error ?? 'failed')}`;
    return { text: list.length ? list.map(line).join('\n') : `webhook ${webhookId} has no deliveries yet`, json: list };
  }

  /** `docent forge …` (src/cli/forge-commands.ts): an organization's forge connections; `json` is the REST answer as it came. */
  forges(orgId: string) {
    const at = `/v2/admin/orgs/${encodeURIComponent(orgId)}/forges`;
    const one = (forgeId: string) => `${at}/${encodeURIComponent(forgeId)}`;
    return {
      add: async (body: Record<string, unknown>): Promise<Output> => {
        const made = await this.call('POST', at, body);
        const how = made.credential === 'app' ? `installation ${made.installationId} of the deployment's GitHub App` : 'a token';
        return {
          text: String(made.webhookSecret),
          note: `added forge connection ${made.id} of organization ${orgId} (${made.apiUrl}, ${how}): point the forge's webhooks at ${made.webhookUrl} (content type application/json) with the secret printed above; it is shown only once, store it now`,
          json: made,
        };
      },
      list: async (): Promise<Output> => {
        const answer = await this.call('GET', at);
        const list = answer.forges as Json[];
        const line = (v: Json) => `${v.id}  ${v.kind}  ${v.credential === 'app' ? `app installation ${v.installationId}` : v.credential}  ${v.apiUrl}  ${v.gitUrl}  ${v.webhookUrl}`;
        return { text: list.length ? list.map(line).join('\n') : `organization ${orgId} has no forge connections`, json: answer };
      },
      remove: async (forgeId: string): Promise<Output> => {
        const r = await this.call('DELETE', one(forgeId));
        return { text: `removed forge connection ${forgeId} of organization ${orgId}: projects that named their repository through it can no longer reach it`, json: r };
      },
      rotateSecret: async (forgeId: string): Promise<Output> => {
        const r = await this.call('POST', `${one(forgeId)}/webhook-secret`);
        return {
          text: String(r.webhookSecret),
          note: `made a new webhook secret for forge connection ${forgeId}: set it as the secret of the forge's webhooks to ${r.webhookUrl}; it is shown only once, and the previous one no longer verifies`,
          json: r,
        };
      },
    };
  }

  async githubWebhookSecret(projectId: string): Promise<Output> {
    const r = await this.call('POST', `/v2/admin/projects/${encodeURIComponent(projectId)}/github/webhook-secret`);
    return {
      text: String(r.secret),
      note: `made a new GitHub webhook secret for project ${projectId}: set it as the secret of ${r.repository}'s webhook to <gateway>/github/webhook (content type application/json); it is shown only once, and the previous one no longer verifies`,
      json: r,
    };
  }
}
