import type { Client as EsClient, estypes } from '@elastic/elasticsearch';
import { cancellationSignal, heartbeat } from '@temporalio/activity';
import type { DocChunk } from '../src/docs/chunk';
import { indexingProgress } from '../src/docs/ingest-progress';
import { embeddingKey } from '../src/search/docs-index';
import { embeddingText, type Embedder } from '../src/search/embedder';

/** Passages per bulk request; also the group embedded while the group before it is being indexed. */
export const bulkBatch = 500;

/**
 * Embeds the chunks and bulk-indexes them, group by group: group k+1 embeds on the model threads while group k is
 * indexed, so neither the model nor Elasticsearch waits for the other, and at most two groups of vectors are held.
 * Chunks whose text an earlier index of the domain already embedded with the same model reuse that vector, so
 * re-ingesting after a small edit embeds only what changed. Heartbeats carry pages and passages done, the rate and
 * the time left (src/docs/ingest-progress.ts).
 */
export async function indexChunks<C extends DocChunk>(args: {
  es: EsClient;
  embedder?: Embedder;
  chunks: C[];
  index: string;
  /** The page each chunk belongs to, for the pages-done count. */
  pageOf(c: C): string;
  /** The stored document of a chunk and its vector, and its id. */
  document(c: C, vector: Float32Array | undefined): { id: string; doc: Record<string, unknown> };
  previousIndexes: string[];
  /** Narrows the earlier passages read for reuse (a sync reads only the old versions of the pages it re-embeds). */
  previousQuery?: estypes.QueryDslQueryContainer;
}): Promise<{ embedded?: number }> {
  const { es, embedder, chunks } = args;
  const known = embedder && chunks.length ? await storedVectors(es, embedder.modelId, args.previousIndexes, args.previousQuery ?? { match_all: {} }) : new Map<string, Float32Array>();
  const keys = embedder ? chunks.map(embeddingKey) : [];
  const reused = keys.filter((k) => known.has(k)).length;
  const progress = indexingProgress(chunks.map(args.pageOf), reused);
  let indexed = 0;
  let embedded = 0;

  const embedGroup = async (start: number): Promise<Array<Float32Array | undefined>> => {
    const end = Math.min(chunks.length, start + bulkBatch);
    const vectors: Array<Float32Array | undefined> = keys.slice(start, end).map((k) => known.get(k));
    if (!embedder) return vectors;
    const missing = vectors.flatMap((v, j) => (v ? [] : [start + j]));
    const before = embedded;
    const fresh = await embedder.embedMany(
      missing.map((i) => embeddingText(chunks[i]!)),
      (done) => {
        embedded = before + done;
        heartbeat(progress.update(indexed, embedded));
      },
      // A cancelled ingest stops at the batches in flight instead of embedding every passage left.
      cancellationSignal(),
    );
    for (const [j, i] of missing.entries()) vectors[i - start] = fresh[j];
    return vectors;
  };

  let next = embedGroup(0);
  for (let start = 0; start < chunks.length; start += bulkBatch) {
    const vectors = await next;
    if (start + bulkBatch < chunks.length) {
      next = embedGroup(start + bulkBatch);
      // Awaited on the next turn; a failure while this group is indexed must not go unhandled meanwhile.
      next.catch(() => undefined);
    }
    const group = chunks.slice(start, start + bulkBatch);
    const r = await es.bulk({
      operations: group.flatMap((c, j) => {
        const { id, doc } = args.document(c, vectors[j]);
        return [{ index: { _index: args.index, _id: id } }, doc];
      }),
    });
    if (r.errors) {
      const first = r.items.find((it) => it.index?.error)?.index?.error;
      throw new Error(`bulk indexing failed: ${first?.type ?? 'unknown'}: ${first?.reason ?? ''}`);
    }
    indexed += group.length;
    heartbeat(progress.update(indexed, embedded));
  }
  return { embedded: embedder ? embedded : undefined };
}

async function storedVectors(es: EsClient, modelId: string, indexes: string[], query: estypes.QueryDslQueryContainer): Promise<Map<string, Float32Array>> {
  const byKey = new Map<string, Float32Array>();
  for (const index of indexes) {
    const mapping = await es.indices.getMapping({ index }).catch(() => ({}) as Record<string, never>);
    const meta = (mapping as Record<string, { mappings?: { _meta?: { embeddingModel?: string } } }>)[index]?.mappings?._meta;
    if (meta?.embeddingModel !== modelId) continue;
    const docs = es.helpers.scrollDocuments<{ embedding?: number[]; embedding_key?: string }>({ index, size: 1000, _source: ['embedding', 'embedding_key'], query });
    for await (const d of docs) if (d.embedding && d.embedding_key) byKey.set(d.embedding_key, Float32Array.from(d.embedding));
  }
  return byKey;
}
