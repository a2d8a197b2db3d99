import { createHash } from 'node:crypto';
import { heartbeat } from '@temporalio/activity';
import { CHUNKER_VERSION, type DocChunk, pagePath } from '../src/docs/chunk';
import { chunkDocument, docsAlias, docsIndexBody, docsIndexName, DOCS_INDEX_LAYOUT } from '../src/search/docs-index';
import { embedChunks } from './docs-embeddings';
import { bulkBatch, chunkPageOrFail, docsIngestFailure, waitForCopies, type DocsActivityDeps } from './docs';
import { checkoutDocs, type DocsCheckout, type DocsGitDeps } from './docs-repository';
import type { DocsSyncInput, DocsSyncResult } from '../workflows/docs-sync-contract';

export interface DocsSyncDeps extends DocsActivityDeps {
  git: DocsGitDeps;
}

/** What a synced index records in its mapping's `_meta.sync`: enough for the next sync to copy what did not change. */
interface SyncedMeta {
  commit: string;
  repository: string;
  ref: string;
  docsPath: string;
  /** Layout, chunker, base URL and model: an index made with other settings cannot lend its passages. */
  settings: string;
  /** Blob of each page file. */
  pages: Record<string, string>;
}

type IndexMeta = { source?: string; baseUrl?: string; version?: string; embeddingModel?: string | null; sync?: SyncedMeta };

async function indexMeta(deps: DocsSyncDeps, index: string): Promise<IndexMeta | undefined> {
  const mapping = await deps.es.indices.getMapping({ index }).catch(() => ({}) as Record<string, never>);
  return (mapping as Record<string, { mappings?: { _meta?: IndexMeta } }>)[index]?.mappings?._meta;
}

/**
 * Copies the passages (vectors included) of the given pages from one index to another. Through the worker, not
 * `_reindex`: that is a module a minimal Elasticsearch may lack, and a page's passages are small.
 */
async function copyPassages(deps: DocsSyncDeps, from: string, to: string, paths: string[]): Promise<void> {
  const { es } = deps;
  let copied = 0;
  const pages = es.helpers.scrollSearch<Record<string, unknown>>({ index: from, size: bulkBatch, query: { terms: { path: paths } } });
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

/** Parses and embeds the changed pages and adds them to `index`; returns how many passages were embedded now. */
async function addPages(
  deps: DocsSyncDeps,
  docs: DocsCheckout,
  index: string,
  changed: string[],
  blobs: Map<string, string>,
  baseUrl: string,
  previous: string[],
): Promise<{ chunks: number; embedded?: number }> {
  const { es } = deps;
  const chunks: DocChunk[] = [];
  for (const [i, file] of changed.entries()) {
    chunks.push(...chunkPageOrFail(file, await docs.read(blobs.get(file)!), baseUrl));
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

/**
 * Builds the index a sync publishes: the served index's passages of pages whose blob is unchanged are copied inside
 * Elasticsearch, only new or changed pages are parsed and embedded, removed pages are simply not copied. The index is
 * named after the settings and every page's blob, so a retry rebuilds the same one and a commit that changed no page
 * builds nothing.
 */
export async function syncDocs(deps: DocsSyncDeps, input: DocsSyncInput): Promise<DocsSyncResult> {
  const { es, esIndexPrefix: prefix } = deps;
  const docs = await checkoutDocs(input, deps.git);
  try {
    if (docs.files.length === 0) throw docsIngestFailure('NoDocsFound', `no Markdown or MDX files under ${input.docsPath || '/'} of ${input.repository}@${input.ref}`);
    const baseUrl = input.baseUrl ?? `https://${input.domain}`;
    const embedder = await deps.embedder?.();
    const settings = `layout ${DOCS_INDEX_LAYOUT}\nchunker ${CHUNKER_VERSION}\nbase ${baseUrl}\nembedding ${embedder?.modelId ?? 'none'}`;
    const blobs = new Map(docs.files.map((f) => [f.file, f.blob]));
    const version = createHash('sha256')
      .update(`${settings}\n${docs.files.map((f) => `${f.blob} ${f.file}`).join('\n')}`)
      .digest('hex')
      .slice(0, 16);
    const alias = docsAlias(prefix, input.domain);
    const index = docsIndexName(prefix, input.domain, version);
    const served = Object.keys(await es.indices.getAlias({ name: alias }).catch(() => ({})));
    const previous = served[0];
    const previousMeta = previous ? await indexMeta(deps, previous) : undefined;
    const sync: SyncedMeta = { commit: docs.commit, repository: input.repository, ref: input.ref, docsPath: input.docsPath, settings, pages: Object.fromEntries(blobs) };
    const base = { domain: input.domain, commit: docs.commit, index, pages: docs.files.length };

    if (served.includes(index)) {
      // Same pages at a newer commit: only the recorded commit moves.
      if (previousMeta?.sync?.commit !== docs.commit) await es.indices.putMapping({ index, _meta: { ...previousMeta, sync } });
      const passages = (await es.count({ index })).count;
      return { ...base, passages, pagesReembedded: 0, pagesRemoved: 0, unchanged: true, fullRebuild: false };
    }

    const before = previousMeta?.sync?.settings === settings ? previousMeta.sync.pages : undefined;
    const kept = before ? docs.files.filter((f) => before[f.file] === f.blob).map((f) => f.file) : [];
    const changed = docs.files.filter((f) => before?.[f.file] !== f.blob).map((f) => f.file);
    const removed = before ? Object.keys(before).filter((file) => !blobs.has(file)) : [];

    await es.indices.delete({ index }, { ignore: [404] });
    const body = docsIndexBody(embedder?.dims, deps.esReplicas ?? 0);
    const meta: IndexMeta = { source: input.repository, baseUrl, version, embeddingModel: embedder?.modelId ?? null, sync };
    await es.indices.create({ index, ...body, mappings: { ...body.mappings, _meta: meta } });
    if (previous && kept.length > 0) await copyPassages(deps, previous, index, kept.map(pagePath));
    const added = await addPages(deps, docs, index, changed, blobs, baseUrl, served);
    await es.indices.refresh({ index });
    if ((deps.esReplicas ?? 0) > 0) await waitForCopies(es, index);
    const passages = (await es.count({ index })).count;
    return { ...base, passages, pagesReembedded: changed.length, pagesRemoved: removed.length, passagesEmbedded: added.embedded, unchanged: false, fullRebuild: !before };
  } finally {
    await docs.cleanup();
  }
}

export function createDocsSyncActivities(deps: DocsSyncDeps) {
  return {
    /** Clones the followed ref and builds the index of its docs from the served one plus the changed pages. */
    async syncDocsIndex(input: DocsSyncInput): Promise<DocsSyncResult> {
      return syncDocs(deps, input);
    },
  };
}
