import { parseArgs } from 'node:util';
import { describeIndexing } from '../docs/ingest-progress';
import { Client, Connection } from '@temporalio/client';
import { loadConfig, type Config } from '../config';
import { followInput, type FollowRequest } from '../docs/follow-input';
import { followDocs, syncDocsNow, unfollowDocs, type DocsSyncSchedules, type DocsSyncStatus } from '../docs/sync-schedule';
import { type DocsHealth, docsHealth } from '../docs/docs-health';
import { createEsClient } from '../search/es-client';
import { temporalConnectionOptions, temporalDataConverter } from '../temporal/connection';
import { createForges } from '../forges';
import { createMongo } from '../store/mongo';
import { TenancyStore } from '../tenancy/store';
import { docsSyncUsage } from './usage-texts';
import { AdminApi, operatorKeyFromEnv } from './admin-api';
import { type DocsSyncResult, type GitDocsSource, isSiteSource, type SiteDocsSource } from '../../workflows/docs-sync-contract';

/** `docs ingest --sitemap` flags as the schedule's input and interval. */
export function parseSitemapIngestArgs(args: string[]): { input: SiteDocsSource; everyMs: number } {
  const { values } = parseArgs({ args, options: { domain: { type: 'string' }, sitemap: { type: 'string' }, every: { type: 'string' } }, strict: true, allowPositionals: false });
  if (!values.domain || !values.sitemap) throw new Error(`docs ingest --sitemap needs --domain\n${docsSyncUsage}`);
  return followInput(sitemapRequest(values)) as { input: SiteDocsSource; everyMs: number };
}

const sitemapRequest = (v: { domain?: string; sitemap?: string; every?: string }): FollowRequest => ({ domain: v.domain!, sitemap: v.sitemap!, ...(v.every && { every: v.every }) });

const flags = {
  domain: { type: 'string' },
  repo: { type: 'string' },
  ref: { type: 'string' },
  'docs-path': { type: 'string' },
  every: { type: 'string' },
  'base-url': { type: 'string' },
} as const;

/** `docs follow` flags as what to follow; the fields are checked by followInput, here or in the gateway. */
function followRequestOf(args: string[]): FollowRequest {
  const { values } = parseArgs({ args, options: flags, strict: true, allowPositionals: false });
  if (!values.domain || !values.repo) throw new Error(`docs follow needs --domain and --repo\n${docsSyncUsage}`);
  const v = { ref: values.ref, docsPath: values['docs-path'], baseUrl: values['base-url'], every: values.every };
  return { domain: values.domain, repository: values.repo, ...Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined)) };
}

/** `docs follow` flags as the schedule's input and interval. */
export function parseDocsFollowArgs(args: string[]): { input: GitDocsSource; everyMs: number } {
  return followInput(followRequestOf(args)) as { input: GitDocsSource; everyMs: number };
}

function domainOnly(args: string[]): string {
  const { values } = parseArgs({ args, options: { domain: { type: 'string' } }, strict: true, allowPositionals: false });
  if (!values.domain) throw new Error(`--domain is required\n${docsSyncUsage}`);
  return values.domain;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const every = (ms: number) => (ms % 86_400_000 === 0 ? `${ms / 86_400_000}d` : ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : `${Math.round(ms / 60_000)}m`);

export function describeSyncResult(r: DocsSyncResult): string {
  const excluded = r.pagesExcluded ? `; ${r.pagesExcluded} pages excluded by robots.txt` : '';
  if (r.unchanged) return `unchanged at ${r.commit.slice(0, 12)}: ${r.pages} pages, ${r.passages} passages`;
  const embedded = r.passagesEmbedded !== undefined ? `, ${r.passagesEmbedded} passages embedded` : '';
  return `synced ${r.commit.slice(0, 12)}: ${r.pages} pages, ${r.passages} passages (${r.pagesReembedded} pages re-embedded, ${r.pagesRemoved} removed${embedded}${r.fullRebuild ? ', full rebuild' : ''})${excluded}`;
}

/** `docent docs status`: what is served, the last ingest, and what the domain follows with its syncs. */
export function describeSyncStatus(s: DocsSyncStatus | DocsHealth): string[] {
  const health = 'followed' in s ? s : undefined;
  const lines: string[] = [];
  if (health) {
    lines.push(`${s.domain} serves ${health.pages} pages, ${health.passages} passages${health.index ? ` (${health.index})` : ''}`);
    const i = health.lastIngest;
    if (i) {
      const took = i.durationMs !== undefined ? ` took ${seconds(i.durationMs)}` : '';
      const what = i.error
        ? `failed: ${i.error}`
        : i.status === 'RUNNING'
          ? i.progress
            ? describeIndexing(i.progress)
            : 'running'
          : `${i.pages} pages, ${i.passages} passages${i.unchanged ? ' (unchanged)' : ''}`;
      lines.push(`last ingest    ${new Date(i.startedAt).toISOString()}${took}: ${i.source}: ${what}`);
    }
    if (!health.followed || !s.source) {
      lines.push(`${s.domain} is not followed`);
      return lines;
    }
  }
  const source = s.source!;
  const followed = isSiteSource(source) ? `the site of ${source.sitemap}` : `${source.repository}@${source.ref}${source.docsPath ? ` (${source.docsPath}/)` : ''}`;
  lines.push(`${s.domain} follows ${followed}, every ${every(s.everyMs ?? 0)}`);
  const ok = s.lastSuccess;
  lines.push(ok ? `synced commit  ${ok.commit}\npages          ${ok.pages}\npassages       ${ok.passages}` : 'synced commit  none yet');
  if (ok?.errors?.length) lines.push(`page errors    ${ok.errors.join('\n               ')}`);
  if (s.last) {
    const took = s.last.durationMs !== undefined ? ` took ${seconds(s.last.durationMs)}` : '';
    lines.push(`last sync      ${s.last.startedAt.toISOString()}${took}: ${s.last.error ? `failed: ${s.last.error}` : s.last.status.toLowerCase()}`);
  }
  if (s.running) lines.push(`now            ${s.progress ? describeIndexing(s.progress) : 'syncing'}`);
  if (s.nextSyncAt) lines.push(`next sync      ${s.nextSyncAt.toISOString()}`);
  return lines;
}

async function withSchedules<T>(config: Config, run: (s: DocsSyncSchedules) => Promise<T>): Promise<T> {
  const connection = await Connection.connect(temporalConnectionOptions(config.temporal));
  try {
    const temporal = new Client({ connection, namespace: config.temporal.namespace, dataConverter: temporalDataConverter(config.temporal) });
    return await run({ temporal, taskQueuePrefix: config.temporal.taskQueuePrefix, gitBaseUrl: config.github.gitUrl });
  } finally {
    await connection.close();
  }
}

/**
 * The forge connection a followed repository resolves through, when the domain is a project's: the same gate as the
 * operator API's follow (src/forges/repository-gate.ts). A domain of no project is the deployment operator's own.
 */
async function connectionOfFollow(config: Config, input: GitDocsSource): Promise<{ forgeId?: string }> {
  const mongo = createMongo(config.mongo.url, config.mongo.db, config.dependencyTimeoutMs, config.mongo);
  try {
    const project = await new TenancyStore(mongo.db).getProjectByDomain(input.domain);
    if (!project) return {};
    return { forgeId: (await createForges(mongo.db, config).gate.resolve(project.orgId, input.repository, 'read')).forgeId };
  } finally {
    await mongo.client.close();
  }
}

/** What the docs commands do, through Temporal (bootstrap) or through the operator API (DOCENT_OPERATOR_KEY). */
interface DocsActions {
  follow(r: FollowRequest, firstNow: boolean): Promise<void>;
  /** Through the API, the sync is started and then followed, printing its progress: no request lasts its length. */
  sync(domain: string, print: (line: string) => void): Promise<DocsSyncResult>;
  unfollow(domain: string): Promise<void>;
  status(domain: string): Promise<DocsHealth>;
}

function throughTemporal(config: Config): DocsActions {
  return {
    follow: async (r, firstNow) => {
      const { input, everyMs } = followInput(r);
      const gated = isSiteSource(input) ? input : { ...input, ...(await connectionOfFollow(config, input)) };
      await withSchedules(config, (s) => followDocs(s, gated, everyMs, { firstNow }));
    },
    sync: (domain) => withSchedules(config, (s) => syncDocsNow(s, domain)),
    unfollow: (domain) => withSchedules(config, (s) => unfollowDocs(s, domain)),
    status: (domain) =>
      withSchedules(config, async (schedules) => {
        const es = createEsClient(config.elasticsearch);
        try {
          return await docsHealth({ schedules, es, indexPrefix: config.elasticsearch.indexPrefix }, domain);
        } finally {
          await es.close();
        }
      }),
  };
}

/** `docent docs follow|sync|unfollow|status …`; prints what happened, exits 0 on success. */
export async function docsSyncCommand(action: string, args: string[], config?: Config, print: (line: string) => void = console.log): Promise<number> {
  const operatorKey = config ? undefined : operatorKeyFromEnv();
  const docs: DocsActions = operatorKey ? new AdminApi(operatorKey, undefined, loadConfig().api.requestTimeoutMs).docs() : throughTemporal(config ?? loadConfig());
  if (action === 'follow') {
    const request = followRequestOf(args);
    const { input, everyMs } = parseDocsFollowArgs(args);
    await docs.follow(request, true);
    print(`following ${input.repository}@${input.ref} for ${input.domain} every ${every(everyMs)}; the first sync has started (docent docs status --domain ${input.domain})`);
    return 0;
  }
  if (action === 'ingest-sitemap') {
    const { input, everyMs } = parseSitemapIngestArgs(args);
    print(`crawling ${input.sitemap} for ${input.domain}, then every ${every(everyMs)}`);
    await docs.follow({ domain: input.domain, sitemap: input.sitemap, every: every(everyMs) }, false);
    const result = await docs.sync(input.domain, print);
    print(describeSyncResult(result));
    for (const e of result.errors ?? []) print(`  skipped ${e}`);
    return 0;
  }
  const domain = domainOnly(args);
  if (action === 'sync') {
    print(`syncing ${domain}`);
    print(describeSyncResult(await docs.sync(domain, print)));
    return 0;
  }
  if (action === 'unfollow') {
    await docs.unfollow(domain);
    print(`${domain} is no longer followed; its docs stay as last synced`);
    return 0;
  }
  if (action === 'status') {
    for (const line of describeSyncStatus(await docs.status(domain))) print(line);
    return 0;
  }
  throw new Error(`unknown command: docs ${action}\n${docsSyncUsage}`);
}
