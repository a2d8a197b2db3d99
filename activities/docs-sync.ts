import { createHash } from 'node:crypto';
import { heartbeat } from '@temporalio/activity';
import { CHUNKER_VERSION, type DocChunk, pagePath } from '../src/docs/chunk';
import { chunkDocument, docsAlias, docsIndexBody, docsIndexName, DOCS_INDEX_LAYOUT, versionedIndexPattern } from '../src/search/docs-index';
import { indexChunks } from './docs-embeddings';
import { bulkBatch, chunkPageOrFail, docsIngestFailure, waitForCopies, type DocsActivityDeps } from './docs';
import { checkoutDocs, type DocsGitDeps } from './docs-repository';
import { type CrawlLimits, listSite, type PageValidators } from './docs-site';
import type { OutboundGuard } from '../src/net/outbound';
import { type DocsSyncInput, type DocsSyncResult, type GitDocsSource, isSiteSource, type SiteDocsSource, type SyncDocsPublishInput } from '../workflows/docs-sync-contract';

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

/** The keyword field that tells which version of its page a passage belongs to: `<file>@<version>`. */
const PAGE_VERSION = 'page_version';
const pageVersionKey = (file: string, version: string) => `${file}@${version}`;

/** The alias reads only the passages of the pages' current versions; other versions in the index stay invisible. */
const currentPagesFilter = (keys: string[]) => ({ terms: { [PAGE_VERSION]: keys } });

/** The pages of one sync, whatever the source: each file's version, and its text when it must be parsed. */
interface SourcePages {
  /** The commit, or for a site a hash of its pages' versions. */
  commit: string;
  files: Array<{ file: string; version: string }>;
  read(file: string): Promise<string>;
}

/**
 * Parses and embeds the given pages and writes their passages to `index`, each tagged with its page version and
 * under an id of that version, so the passages readers see are never overwritten. Returns the passages embedded now.
 */
async function addPages(
  deps: DocsSyncDeps,
  source: SourcePages,
  index: string,
  changed: Array<{ file: string; version: string }>,
  baseUrl: string,
  reuse: { indexes: string[]; paths?: string[] },
): Promise<{ embedded?: number }> {
  const { es } = deps;
  const chunks: Array<DocChunk & { key: string }> = [];
  for (const [i, f] of changed.entries()) {
    for (const c of chunkPageOrFail(f.file, await source.read(f.file), baseUrl)) chunks.push({ ...c, key: pageVersionKey(f.file, f.version) });
    heartbeat({ phase: 'parsing', parsed: i + 1, pages: changed.length });
  }
  const embedder = await deps.embedder?.();
  const previousQuery = reuse.paths ? { terms: { path: reuse.paths } } : undefined;
  const { embedded } = await indexChunks({
    es,
    embedder,
    chunks,
    index,
    pageOf: (c) => c.key,
    document: ({ key, ...c }, vector) => ({ id: `${key}:${c.id}`, doc: { ...chunkDocument(c, vector), [PAGE_VERSION]: key } }),
    previousIndexes: reuse.indexes,
    previousQuery,
  });
  return { embedded: chunks.length ? embedded : undefined };
}

/**
 * Adds what a sync changed to the index readers will use, invisible to them until `publishSyncedIndex` moves the
 * alias's filter. When the served index came from an earlier sync with the same settings, that same index receives
 * the passages of new and changed pages, nothing else is touched and nothing unchanged is embedded or copied. Otherwise
 * (first sync, or the chunker, model, layout or base URL changed) a new index named after the settings and every page's
 * version gets every page. Either way a retry writes the same documents again, and a sync that changed no page only
 * records its commit.
 */
async function buildSyncedIndex(deps: DocsSyncDeps, domain: string, baseUrl: string, source: SourcePages, describe: Omit<SyncedMeta, 'commit' | 'settings' | 'pages'>): Promise<DocsSyncResult> {
  const { es, esIndexPrefix: prefix } = deps;
  const embedder = await deps.embedder?.();
  const settings = `layout ${DOCS_INDEX_LAYOUT}\nchunker ${CHUNKER_VERSION}\nbase ${baseUrl}\nembedding ${embedder?.modelId ?? 'none'}\npages by version`;
  const versions = new Map(source.files.map((f) => [f.file, f.version]));
  const alias = docsAlias(prefix, domain);
  const served = Object.keys(await es.indices.getAlias({ name: alias }).catch(() => ({})));
  const previous = served[0];
  const previousMeta = previous ? await indexMeta(deps, previous) : undefined;
  const before = previous && previousMeta?.sync?.settings === settings ? previousMeta.sync.pages : undefined;
  const sync: SyncedMeta = { ...describe, commit: source.commit, settings, pages: Object.fromEntries(versions) };
  const changed = source.files.filter((f) => before?.[f.file] !== f.version);
  const removed = before ? Object.keys(before).filter((file) => !versions.has(file)) : [];
  const counts = { pages: source.files.length, pagesReembedded: changed.length, pagesRemoved: removed.length, fullRebuild: !before };

  if (before) {
    const index = previous!;
    if (changed.length === 0 && removed.length === 0) {
      // Same pages at a newer commit (or with new validators): only the record moves.
      if (JSON.stringify(previousMeta?.sync) !== JSON.stringify(sync)) await es.indices.putMapping({ index, _meta: { ...previousMeta, sync } });
      return { domain, commit: source.commit, index, passages: (await es.count({ index: alias })).count, ...counts, unchanged: true };
    }
    const reuse = { indexes: [index], paths: changed.map((f) => pagePath(f.file)) };
    const added = await addPages(deps, source, index, changed, baseUrl, reuse);
    await es.indices.refresh({ index });
    // The record says what the index holds; readers still see the versions the alias's filter names until publishing.
    await es.indices.putMapping({ index, _meta: { ...previousMeta, sync } });
    return { domain, commit: source.commit, index, passages: await currentPassages(deps, index, sync), ...counts, passagesEmbedded: added.embedded, unchanged: false };
  }

  const version = createHash('sha256')
    .update(`${settings}\n${source.files.map((f) => `${f.version} ${f.file}`).join('\n')}`)
    .digest('hex')
    .slice(0, 16);
  const index = docsIndexName(prefix, domain, version);
  await es.indices.delete({ index }, { ignore: [404] });
  const body = docsIndexBody(embedder?.dims, deps.esReplicas ?? 0);
  const meta: IndexMeta = { source: describe.repository ?? describe.sitemap, baseUrl, version, embeddingModel: embedder?.modelId ?? null, sync };
  await es.indices.create({ index, ...body, mappings: { ...body.mappings, properties: { ...body.mappings.properties, [PAGE_VERSION]: { type: 'keyword' } }, _meta: meta } });
  const added = await addPages(deps, source, index, changed, baseUrl, { indexes: served });
  await es.indices.refresh({ index });
  if ((deps.esReplicas ?? 0) > 0) await waitForCopies(es, index);
  return { domain, commit: source.commit, index, passages: await currentPassages(deps, index, sync), ...counts, passagesEmbedded: added.embedded, unchanged: false };
}

/** Passages of the pages' current versions in `index`: what readers will see once it is published. */
async function currentPassages(deps: DocsSyncDeps, index: string, sync: SyncedMeta): Promise<number> {
  const keys = Object.entries(sync.pages).map(([file, version]) => pageVersionKey(file, version));
  return (await deps.es.count({ index, query: currentPagesFilter(keys) })).count;
}

/**
 * Switches readers to the synced pages in one `_aliases` request: the alias moves to the index (if it is new) and its
 * filter to the pages' current versions. Then the passages of versions no longer current are deleted, and the domain's
 * other indexes; a search already under way keeps the reader it opened, and a search on a deleted index is retried by
 * the search code. The pages and versions are read from the index's own record, so retries and late runs agree.
 */
async function publishSynced(deps: DocsSyncDeps, input: SyncDocsPublishInput): Promise<{ deletedIndexes: string[]; deletedPassages: number }> {
  const { es, esIndexPrefix: prefix } = deps;
  const alias = docsAlias(prefix, input.domain);
  const sync = (await indexMeta(deps, input.index))?.sync;
  if (!sync) throw new Error(`index ${input.index} has no sync record`);
  const keys = Object.entries(sync.pages).map(([file, version]) => pageVersionKey(file, version));
  const served = Object.keys(await es.indices.getAlias({ name: alias }).catch(() => ({})));
  await es.indices.updateAliases({
    actions: [...served.filter((i) => i !== input.index).map((i) => ({ remove: { index: i, alias } })), { add: { index: input.index, alias, filter: currentPagesFilter(keys) } }],
  });
  let deletedPassages = 0;
  const stale = es.helpers.scrollSearch({ index: input.index, size: bulkBatch, _source: false, query: { bool: { must_not: [currentPagesFilter(keys)] } } });
  for await (const response of stale) {
    const hits = response.body.hits.hits;
    if (hits.length === 0) continue;
    await es.bulk({ operations: hits.map((h) => ({ delete: { _index: input.index, _id: h._id! } })) });
    deletedPassages += hits.length;
  }
  if (deletedPassages > 0) await es.indices.refresh({ index: input.index });
  const ours = versionedIndexPattern(alias);
  const existing = Object.keys(await es.indices.get({ index: `${alias}-*`, expand_wildcards: 'all' }));
  const deletedIndexes = existing.filter((i) => ours.test(i) && i !== input.index);
  if (deletedIndexes.length) await es.indices.delete({ index: deletedIndexes.join(',') }, { ignore: [404] });
  return { deletedIndexes, deletedPassages };
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
    /** Reads the followed source (a clone of the ref, or a crawl of the site) and adds what changed to the index. */
    async syncDocsIndex(input: DocsSyncInput): Promise<DocsSyncResult> {
      return isSiteSource(input) ? syncSite(deps, input) : syncRepository(deps, input);
    },

    /** Points readers at the synced pages atomically, then removes what they can no longer see. */
    async publishSyncedIndex(input: SyncDocsPublishInput): Promise<{ deletedIndexes: string[]; deletedPassages: number }> {
      return publishSynced(deps, input);
    },
  };
}
