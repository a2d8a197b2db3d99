import { createHash } from 'node:crypto';
import { heartbeat } from '@temporalio/activity';
import { CHUNKER_VERSION, type DocChunk, pagePath } from '../src/docs/chunk';
import { chunkDocument, docsAlias, docsIndexBody, docsIndexName, DOCS_INDEX_LAYOUT } from '../src/search/docs-index';
import { embedChunks } from './docs-embeddings';
import { bulkBatch, chunkPageOrFail, docsIngestFailure, waitForCopies, type DocsActivityDeps } from './docs';
import { checkoutDocs, type DocsGitDeps } from './docs-repository';
import { type CrawlLimits, listSite, type PageValidators } from './docs-site';
import type { OutboundGuard } from '../src/net/outbound';
import { type DocsSyncInput, type DocsSyncResult, type GitDocsSource, isSiteSource, type SiteDocsSource } from '../workflows/docs-sync-contract';

export interface DocsSyncDeps extends DocsActivityDeps {
  git: DocsGitDeps;
  /** Checks every address a crawl fetches from (DOCENT_ALLOW_PRIVATE_NETWORKS). */
  guard: OutboundGuard;
  crawlLimits: CrawlLimits;
}

/** What a synced index records in its mapping's `_meta.sync`: enough for the next sync to copy what did not change. */
interface SyncedMeta {
  commit: string;
  repository?: string;
  ref?: string;
  docsPath?: string;
  sitemap?: string;
  /** A site's ETag/Last-Modified per page, for the next crawl's conditional requests. */
  validators?: Record<string, PageValidators>;
  /** Layout, chunker, base URL and model: an index made with other settings cannot lend its passages. */
  settings: string;
  /** Version of each page file: its git blob, or the hash of a site page's Markdown. */
  pages: Record<string, string>;
}

type IndexMeta = { source?: string; baseUrl?: string; version?: string; embeddingModel?: string | null; sync?: SyncedMeta };

async function indexMeta(deps: DocsSyncDeps, index: string): Promise<IndexMeta | undefined> {
  const mapping = await deps.es.indices.getMapping({ index }).catch(() => ({}) as Record<string, never>);
  return (mapping as Record<string, { mappings?: { _meta?: IndexMeta } }>)[index]?.mappings?._meta;
}

const termsPerQuery = 10_000;

/**
 * Copies the passages (vectors included) of the given pages from one index to another. Through the worker, not
 * `_reindex`: that is a module a minimal Elasticsearch may lack, and a page's passages are small.
 */
async function copyPassages(deps: DocsSyncDeps, from: string, to: string, paths: string[]): Promise<void> {
  const { es } = deps;
  let copied = 0;
  // A `terms` query takes at most 65,536 values (index.max_terms_count).
  for (let i = 0; i < paths.length; i += termsPerQuery) {
    const pages = es.helpers.scrollSearch<Record<string, unknown>>({ index: from, size: bulkBatch, query: { terms: { path: paths.slice(i, i + termsPerQuery) } } });
    for await (const response of pages) {
      const hits = response.body.hits.hits;
      if (hits.length === 0) continue;
      const r = await es.bulk({ operations: hits.flatMap((h) => [{ index: { _index: to, _id: h._id } }, h._source ?? {}]) });
      if (r.errors) {
        const first = r.items.find((it) => it.index?.error)?.index?.error;
        throw new Error(`copying unchanged passages failed: ${first?.type ?? 'unknown'}: ${first?.reason ?? ''}`);
      }
      copied += hits.length;
      heartbeat({ phase: 'copying', copied });
    }
  }
}

/** Parses and embeds the changed pages and adds them to `index`; returns how many passages were embedded now. */
async function addPages(deps: DocsSyncDeps, source: SourcePages, index: string, changed: string[], baseUrl: string, previous: string[]): Promise<{ chunks: number; embedded?: number }> {
  const { es } = deps;
  const chunks: DocChunk[] = [];
  for (const [i, file] of changed.entries()) {
    chunks.push(...chunkPageOrFail(file, await source.read(file), baseUrl));
    heartbeat({ phase: 'parsing', parsed: i + 1, pages: changed.length });
  }
  const embedder = await deps.embedder?.();
  const embedding = embedder ? await embedChunks({ es, embedder, chunks, previousIndexes: previous }) : undefined;
  for (let i = 0; i < chunks.length; i += bulkBatch) {
    const batch = chunks.slice(i, i + bulkBatch);
    const r = await es.bulk({ operations: batch.flatMap((c, j) => [{ index: { _index: index, _id: c.id } }, chunkDocument(c, embedding?.vectors[i + j])]) });
    if (r.errors) {
      const first = r.items.find((it) => it.index?.error)?.index?.error;
      throw new Error(`bulk indexing failed: ${first?.type ?? 'unknown'}: ${first?.reason ?? ''}`);
    }
    heartbeat({ phase: 'indexing', indexed: i + batch.length, total: chunks.length });
  }
  return { chunks: chunks.length, embedded: embedding?.embedded };
}

/** The pages of one sync, whatever the source: each file's version, and its text when it must be parsed. */
interface SourcePages {
  /** The commit, or for a site a hash of its pages' versions. */
  commit: string;
  files: Array<{ file: string; version: string }>;
  read(file: string): Promise<string>;
}

/**
 * Builds the index a sync publishes: the served index's passages of pages whose version is unchanged are copied,
 * only new or changed pages are parsed and embedded, removed pages are simply not copied. The index is named after
 * the settings and every page's version, so a retry rebuilds the same one and a sync that changed no page builds
 * nothing.
 */
async function buildSyncedIndex(deps: DocsSyncDeps, domain: string, baseUrl: string, source: SourcePages, describe: Omit<SyncedMeta, 'commit' | 'settings' | 'pages'>): Promise<DocsSyncResult> {
  const { es, esIndexPrefix: prefix } = deps;
  const embedder = await deps.embedder?.();
  const settings = `layout ${DOCS_INDEX_LAYOUT}\nchunker ${CHUNKER_VERSION}\nbase ${baseUrl}\nembedding ${embedder?.modelId ?? 'none'}`;
  const versions = new Map(source.files.map((f) => [f.file, f.version]));
  const version = createHash('sha256')
    .update(`${settings}\n${source.files.map((f) => `${f.version} ${f.file}`).join('\n')}`)
    .digest('hex')
    .slice(0, 16);
  const alias = docsAlias(prefix, domain);
  const index = docsIndexName(prefix, domain, version);
  const served = Object.keys(await es.indices.getAlias({ name: alias }).catch(() => ({})));
  const previous = served[0];
  const previousMeta = previous ? await indexMeta(deps, previous) : undefined;
  const sync: SyncedMeta = { ...describe, commit: source.commit, settings, pages: Object.fromEntries(versions) };
  const base = { domain, commit: source.commit, index, pages: source.files.length };

  if (served.includes(index)) {
    // Same pages at a newer commit (or with new validators): only the record moves.
    if (JSON.stringify(previousMeta?.sync) !== JSON.stringify(sync)) await es.indices.putMapping({ index, _meta: { ...previousMeta, sync } });
    const passages = (await es.count({ index })).count;
    return { ...base, passages, pagesReembedded: 0, pagesRemoved: 0, unchanged: true, fullRebuild: false };
  }

  const before = previousMeta?.sync?.settings === settings ? previousMeta.sync.pages : undefined;
  const kept = before ? source.files.filter((f) => before[f.file] === f.version).map((f) => f.file) : [];
  const changed = source.files.filter((f) => before?.[f.file] !== f.version).map((f) => f.file);
  const removed = before ? Object.keys(before).filter((file) => !versions.has(file)) : [];

  await es.indices.delete({ index }, { ignore: [404] });
  const body = docsIndexBody(embedder?.dims, deps.esReplicas ?? 0);
  const meta: IndexMeta = { source: describe.repository ?? describe.sitemap, baseUrl, version, embeddingModel: embedder?.modelId ?? null, sync };
  await es.indices.create({ index, ...body, mappings: { ...body.mappings, _meta: meta } });
  if (previous && kept.length > 0) await copyPassages(deps, previous, index, kept.map(pagePath));
  const added = await addPages(deps, source, index, changed, baseUrl, served);
  await es.indices.refresh({ index });
  if ((deps.esReplicas ?? 0) > 0) await waitForCopies(es, index);
  const passages = (await es.count({ index })).count;
  return { ...base, passages, pagesReembedded: changed.length, pagesRemoved: removed.length, passagesEmbedded: added.embedded, unchanged: false, fullRebuild: !before };
}

async function syncRepository(deps: DocsSyncDeps, input: GitDocsSource): Promise<DocsSyncResult> {
  const docs = await checkoutDocs(input, deps.git);
  try {
    if (docs.files.length === 0) throw docsIngestFailure('NoDocsFound', `no Markdown or MDX files under ${input.docsPath || '/'} of ${input.repository}@${input.ref}`);
    const blobs = new Map(docs.files.map((f) => [f.file, f.blob]));
    const source: SourcePages = { commit: docs.commit, files: docs.files.map((f) => ({ file: f.file, version: f.blob })), read: (file) => docs.read(blobs.get(file)!) };
    return await buildSyncedIndex(deps, input.domain, input.baseUrl ?? `https://${input.domain}`, source, { repository: input.repository, ref: input.ref, docsPath: input.docsPath });
  } finally {
    await docs.cleanup();
  }
}

async function syncSite(deps: DocsSyncDeps, input: SiteDocsSource): Promise<DocsSyncResult> {
  const alias = docsAlias(deps.esIndexPrefix, input.domain);
  const served = Object.keys(await deps.es.indices.getAlias({ name: alias }).catch(() => ({})))[0];
  const before = served ? (await indexMeta(deps, served))?.sync : undefined;
  const previous = before?.sitemap === input.sitemap ? { pages: before.pages, validators: before.validators ?? {} } : undefined;
  const site = await listSite(input, deps.guard, previous, deps.crawlLimits);
  if (site.files.length === 0) throw docsIngestFailure('NoDocsFound', `no readable page in ${input.sitemap}${site.errors.length ? `: ${site.errors.slice(0, 3).join('; ')}` : ''}`);
  const commit = createHash('sha256')
    .update(site.files.map((f) => `${f.version} ${f.file}`).join('\n'))
    .digest('hex')
    .slice(0, 16);
  const result = await buildSyncedIndex(deps, input.domain, new URL(input.sitemap).origin, { commit, files: site.files, read: site.read }, { sitemap: input.sitemap, validators: site.validators });
  return { ...result, pagesExcluded: site.excluded, ...(site.errors.length ? { errors: site.errors.slice(0, 20) } : {}) };
}

export function createDocsSyncActivities(deps: DocsSyncDeps) {
  return {
    /** Reads the followed source (a clone of the ref, or a crawl of the site) and builds the index of its docs. */
    async syncDocsIndex(input: DocsSyncInput): Promise<DocsSyncResult> {
      return isSiteSource(input) ? syncSite(deps, input) : syncRepository(deps, input);
    },
  };
}
