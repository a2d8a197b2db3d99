import type { Client as EsClient, estypes } from '@elastic/elasticsearch';
import { heartbeat } from '@temporalio/activity';
import type { DocChunk } from '../src/docs/chunk';
import { embeddingKey } from '../src/search/docs-index';
import { embeddingText, type Embedder } from '../src/search/embedder';

/**
 * The vectors of the chunks, in their order. Chunks whose text an earlier index of the domain already embedded with
 * the same model reuse that vector, so re-ingesting after a small edit embeds only what changed.
 */
export async function embedChunks(args: {
  es: EsClient;
  embedder: Embedder;
  chunks: DocChunk[];
  previousIndexes: string[];
  /** Narrows the earlier passages read for reuse (a sync reads only the old versions of the pages it re-embeds). */
  previousQuery?: estypes.QueryDslQueryContainer;
}): Promise<{ vectors: Float32Array[]; embedded: number }> {
  const { es, embedder, chunks } = args;
  const known = await storedVectors(es, embedder.modelId, args.previousIndexes, args.previousQuery ?? { match_all: {} });
  const keys = chunks.map(embeddingKey);
  const vectors: Array<Float32Array | undefined> = keys.map((k) => known.get(k));
  const missing = chunks.map((_, i) => i).filter((i) => !vectors[i]);
  const fresh = await embedder.embedMany(
    missing.map((i) => embeddingText(chunks[i]!)),
    (done) => heartbeat({ phase: 'embedding', embedded: done, total: missing.length, reused: chunks.length - missing.length }),
  );
  for (const [j, i] of missing.entries()) vectors[i] = fresh[j];
  return { vectors: vectors as Float32Array[], embedded: missing.length };
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
