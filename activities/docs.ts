import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Client as EsClient } from '@elastic/elasticsearch';
import { ApplicationFailure, heartbeat } from '@temporalio/activity';
import { CHUNKER_VERSION, chunkPage, type DocChunk, InvalidFrontMatterError } from '../src/docs/chunk';
import { chunkDocument, docsAlias, docsIndexBody, docsIndexName, DOCS_INDEX_LAYOUT, versionedIndexPattern } from '../src/search/docs-index';
import type { Embedder } from '../src/search/embedder';
import { bulkBatch, indexChunks } from './docs-embeddings';
import { docsRepositoryAccess, type DocsGitDeps } from './docs-repository';
import { hardenedGit } from '../src/git/access';
import type { BuildDocsIndexResult, DocsIngestInput, DocsIngestErrorType, PublishDocsIndexInput, PublishDocsIndexResult } from '../workflows/docs-ingest-contract';

export interface DocsActivityDeps {
  es: EsClient;
  esIndexPrefix: string;
  /** Copies of each index on other nodes (DOCENT_ES_REPLICAS); 0 on one node. */
  esReplicas?: number;
  /** The passage-embedding model; undefined when embeddings are off. */
  embedder?: () => Promise<Embedder>;
  /** How git sources are reached (the agent's credentials); without it no token is sent. */
  git?: DocsGitDeps;
}

/** A failure that retrying cannot fix: its type is on the workflow's closed list of non-retryable errors. */
export function docsIngestFailure(type: DocsIngestErrorType, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message });
}

/** A page whose front matter cannot be read stays broken on retry, and is not indexed without its `groups`. */
export function chunkPageOrFail(file: string, source: string, baseUrl: string): DocChunk[] {
  try {
    return chunkPage(file, source, { baseUrl });
  } catch (err) {
    if (err instanceof InvalidFrontMatterError) throw docsIngestFailure('InvalidDocsSource', err.message);
    throw err;
  }
}

const docExtensions = /\.(md|mdx|markdown)$/i;
const skippedDirs = new Set(['.git', 'node_modules']);
export { bulkBatch };

export function isGitSource(source: string): boolean {
  return /^(https?|ssh|git|file):\/\//i.test(source) || /^[\w.-]+@[\w.-]+:/.test(source);
}

async function listDocs(root: string, dir = ''): Promise<string[]> {
  const entries = await readdir(path.join(root, dir), { withFileTypes: true });
  const files: string[] = [];
  for (const e of entries) {
    const rel = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory() && !skippedDirs.has(e.name)) files.push(...(await listDocs(root, rel)));
    else if (e.isFile() && docExtensions.test(e.name)) files.push(rel);
  }
  return files.sort();
}

/** Heartbeats while `work` runs, for steps (such as a clone) that report no progress of their own. */
async function withHeartbeats<T>(details: unknown, work: Promise<T>): Promise<T> {
  const timer = setInterval(() => heartbeat(details), 5_000);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}

/**
 * A shallow clone of a git source with the agent's hardened git and credentials (the token for the configured git
 * host), checked out for the indexer to read. `file://` is allowed here: the worker reads local folders anyway.
 */
async function cloneDocs(deps: DocsActivityDeps, input: DocsIngestInput): Promise<{ root: string; cleanup: () => Promise<void> }> {
  if (!/^(https?|file):\/\//i.test(input.source)) throw docsIngestFailure('InvalidDocsSource', `only http(s) and file:// git URLs can be cloned, not ${input.source}`);
  const parent = await mkdtemp(path.join(os.tmpdir(), 'docent-docs-'));
  const dir = path.join(parent, 'repo');
  const cleanup = () => rm(parent, { recursive: true, force: true });
  try {
    const access = /^file:/i.test(input.source)
      ? { config: { 'protocol.file.allow': 'always' } }
      : await docsRepositoryAccess(input.source, deps.git ?? { gitBaseUrl: 'https://github.com', allowPrivateNetworks: [] });
    const args = ['--depth', '1', '--single-branch', '--no-tags', ...(input.ref ? ['--branch', input.ref] : [])];
    await withHeartbeats({ phase: 'cloning' }, hardenedGit(parent, parent, access.config).clone(input.source, dir, args));
  } catch (err) {
    await cleanup();
    if (err instanceof ApplicationFailure) throw err;
    const msg = err instanceof Error ? err.message : String(err);
    if (/could not read Username|authentication failed|403|401/i.test(msg))
      throw docsIngestFailure('DocsSourceNotFound', `cannot clone ${input.source}: the git server refused the credentials (DOCENT_GITHUB_TOKEN is sent only to DOCENT_GITHUB_GIT_URL's host)`);
    // A repository or ref that does not exist stays missing on retry; network trouble is retried.
    if (/not found|does not exist|could not find remote branch|does not appear to be a git repository/i.test(msg)) {
      throw docsIngestFailure('DocsSourceNotFound', `cannot clone ${input.source}: ${msg.trim().split('\n').pop()}`);
    }
    throw err;
  }
  return { root: input.docsPath ? path.join(dir, input.docsPath) : dir, cleanup };
}

async function fetchDocs(deps: DocsActivityDeps, input: DocsIngestInput): Promise<{ root: string; cleanup: () => Promise<void> }> {
  if (isGitSource(input.source)) return cloneDocs(deps, input);
  if (!path.isAbsolute(input.source)) throw docsIngestFailure('InvalidDocsSource', `docs folder must be an absolute path: ${input.source}`);
  const root = input.docsPath ? path.join(input.source, input.docsPath) : input.source;
  const s = await stat(root).catch(() => null);
  if (!s?.isDirectory()) throw docsIngestFailure('DocsSourceNotFound', `no docs folder at ${root} on the worker`);
  return { root, cleanup: async () => undefined };
}

/** Waits until every copy of the index is allocated, heartbeating; a cluster too small for them fails and is retried. */
export async function waitForCopies(es: EsClient, index: string): Promise<void> {
  for (let waited = 0; ; waited += 5) {
    heartbeat({ phase: 'replicating' });
    const health = await es.cluster.health({ index, wait_for_status: 'green', timeout: '5s' }, { ignore: [408] });
    if (health.status === 'green') return;
    if (waited >= 120) throw new Error(`index ${index} has unassigned copies after ${waited} s: DOCENT_ES_REPLICAS may exceed the nodes available`);
  }
}

/**
 * Parses and chunks the docs under `root`, then fills the index named after their content hash. Idempotent: an index
 * the alias already serves means nothing changed; a half-built one from an earlier attempt is rebuilt.
 */
export async function indexDocs(
  deps: DocsActivityDeps,
  root: string,
  input: Pick<DocsIngestInput, 'domain' | 'source' | 'baseUrl' | 'docsPath'>,
  /** Other domains whose served vectors may be reused (a preview reuses the live docs'). */
  reuseFrom: string[] = [],
): Promise<BuildDocsIndexResult> {
  const { es, esIndexPrefix: prefix } = deps;
  const files = await listDocs(root).catch(() => [] as string[]);
  if (files.length === 0) throw docsIngestFailure('NoDocsFound', `no Markdown or MDX files under ${input.docsPath ?? input.source}`);
  const baseUrl = input.baseUrl ?? `https://${input.domain}`;
  const embedder = await deps.embedder?.();
  // The model is part of the version: turning embeddings on, or changing the model, rebuilds the index.
  const hash = createHash('sha256').update(`layout ${DOCS_INDEX_LAYOUT}\nchunker ${CHUNKER_VERSION}\nbase ${baseUrl}\nembedding ${embedder?.modelId ?? 'none'}\n`);
  const chunks: DocChunk[] = [];
  for (const [i, file] of files.entries()) {
    const source = await readFile(path.join(root, file), 'utf8');
    hash.update(`${file}\n${source.length}\n${source}`);
    chunks.push(...chunkPageOrFail(file, source, baseUrl));
    // Parsing takes milliseconds per page, so a large docs set would outlast the heartbeat timeout.
    heartbeat({ phase: 'parsing', parsed: i + 1, pages: files.length });
  }
  const version = hash.digest('hex').slice(0, 16);
  const alias = docsAlias(prefix, input.domain);
  const index = docsIndexName(prefix, input.domain, version);
  const summary = { index, version, pages: files.length, chunks: chunks.length };

  const served = await es.indices.getAlias({ name: alias }).catch(() => ({}));
  if (Object.keys(served).includes(index)) return { ...summary, unchanged: true };

  const reusable = [...Object.keys(served), ...(await Promise.all(reuseFrom.map(async (d) => Object.keys(await es.indices.getAlias({ name: docsAlias(prefix, d) }).catch(() => ({})))))).flat()];
  await es.indices.delete({ index }, { ignore: [404] });
  const replicas = deps.esReplicas ?? 0;
  const body = docsIndexBody(embedder?.dims, replicas);
  await es.indices.create({ index, ...body, mappings: { ...body.mappings, _meta: { source: input.source, baseUrl, version, embeddingModel: embedder?.modelId ?? null } } });
  const embedding = await indexChunks({
    es,
    embedder,
    chunks,
    index,
    pageOf: (c) => c.path,
    document: (c, vector) => ({ id: c.id, doc: chunkDocument(c, vector) }),
    previousIndexes: reusable,
  });
  await es.indices.refresh({ index });
  // Published only once its copies exist, so losing a node right after the swap loses no passage.
  if (replicas > 0) await waitForCopies(es, index);
  return { ...summary, unchanged: false, embedded: embedding.embedded };
}

export function createDocsActivities(deps: DocsActivityDeps) {
  const { es, esIndexPrefix: prefix } = deps;

  return {
    /**
     * Fetches, parses and chunks the docs, then fills the index named after their content hash. Idempotent: an index
     * the alias already serves means nothing changed; a half-built one from an earlier attempt is rebuilt.
     */
    async buildDocsIndex(input: DocsIngestInput): Promise<BuildDocsIndexResult> {
      const { root, cleanup } = await fetchDocs(deps, input);
      try {
        return await indexDocs(deps, root, input);
      } finally {
        await cleanup();
      }
    },

    /** Points the alias at the new index in one atomic request, then deletes every other index of the domain. */
    async publishDocsIndex(input: PublishDocsIndexInput): Promise<PublishDocsIndexResult> {
      const alias = docsAlias(prefix, input.domain);
      const served = Object.keys(await es.indices.getAlias({ name: alias }).catch(() => ({})));
      if (!served.includes(input.index) || served.length > 1) {
        await es.indices.updateAliases({
          actions: [...served.filter((i) => i !== input.index).map((i) => ({ remove: { index: i, alias } })), { add: { index: input.index, alias } }],
        });
      }
      // Only this domain's versioned indexes: `<alias>-<16 hex>`, so a domain that extends this one is never matched.
      const ours = versionedIndexPattern(alias);
      const existing = Object.keys(await es.indices.get({ index: `${alias}-*`, expand_wildcards: 'all' }));
      const stale = existing.filter((i) => ours.test(i) && i !== input.index);
      if (stale.length) await es.indices.delete({ index: stale.join(',') }, { ignore: [404] });
      return { alias, index: input.index, deletedIndexes: stale };
    },
  };
}
