// A docs index of up to a million passages for search-scale: the npm docs of test/fixtures (real text, real vectors)
// first, then passages generated from them. Built once and kept, keyed by its content, so later runs reuse it.
import { createHash } from 'node:crypto';
import type { Client as EsClient } from '@elastic/elasticsearch';
import type { DocChunk } from '../../src/docs/chunk';
import { chunkDocument, docsIndexBody } from '../../src/search/docs-index';
import { type Embedder, embeddingText } from '../../src/search/embedder';
import { npmDocChunks } from './npm-docs';

/** Bumped when the generator changes; the mapping and the passage count are in the index name already. */
const generatorVersion = 1;
const passagesPerPage = 8;
const bulkDocs = 1000;
const bulkInFlight = 2;
// Per-component noise (standard deviation) around a real passage's vector: the generated vector's cosine to it is about 0.6, so the
// vectors form clusters around real topics, as a large docs site's do, instead of uniform noise HNSW finds no
// structure in.
const noise = 0.065;

/** A deterministic generator, so every build indexes the same corpus. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function sentencesOf(text: string): string[] {
  return text
    .split(/(?<=[.!?:])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.length >= 15);
}

/** The kept index for `passages` passages under this mapping (`docent-bench-scale-…`, outside every run's prefix). */
export function scaleIndexName(passages: number, mapping: object): string {
  const key = createHash('sha256').update(JSON.stringify({ generatorVersion, mapping })).digest('hex').slice(0, 10);
  return `docent-bench-scale-${passages}-${key}`;
}

export interface SeedMaterial {
  chunks: DocChunk[];
  vectors: Float32Array[];
}

/** The real passages and their vectors from the model docent uses: the seed of every generated passage. */
export async function seedMaterial(embedder: Embedder): Promise<SeedMaterial> {
  const chunks = await npmDocChunks();
  return { chunks, vectors: await embedder.embedMany(chunks.map(embeddingText)) };
}

/**
 * Passage `i`: the real passage `i` while there are real ones; beyond them a passage of a generated page, whose
 * text is real sentences drawn at random, whose title and headings are a real passage's and whose vector is that
 * passage's plus noise.
 */
export function* scalePassages(seed: SeedMaterial, passages: number): Generator<{ chunk: DocChunk; vector: Float32Array }> {
  const rand = rng(42);
  const pool = seed.chunks.flatMap((c) => sentencesOf(c.text));
  const dims = seed.vectors[0]!.length;
  for (let i = 0; i < passages; i++) {
    if (i < seed.chunks.length) {
      yield { chunk: seed.chunks[i]!, vector: seed.vectors[i]! };
      continue;
    }
    const b = Math.floor(rand() * seed.chunks.length);
    const base = seed.chunks[b]!;
    const page = Math.floor(i / passagesPerPage);
    const part = i % passagesPerPage;
    const n = 3 + Math.floor(rand() * 6);
    const text = Array.from({ length: n }, () => pool[Math.floor(rand() * pool.length)]!).join(' ');
    const path = `generated/${page}/${base.path}`;
    const v = Float32Array.from(seed.vectors[b]!, (x) => x + (rand() - 0.5) * 2 * Math.sqrt(3) * noise);
    let norm = 0;
    for (let d = 0; d < dims; d++) norm += v[d]! * v[d]!;
    norm = Math.sqrt(norm);
    for (let d = 0; d < dims; d++) v[d]! /= norm;
    yield {
      chunk: { ...base, id: `${path}#part-${part}`, path, url: `https://docs.bench.test/${path}#part-${part}`, anchor: `part-${part}`, text, order: part },
      vector: v,
    };
  }
}

/** The stored document, with the vector's components rounded to 5 decimals (half the JSON, the same index). */
function scaleDocument(chunk: DocChunk, vector: Float32Array): Record<string, unknown> {
  const doc = chunkDocument(chunk, vector);
  doc.embedding = (doc.embedding as number[]).map((x) => Math.round(x * 1e5) / 1e5);
  return doc;
}

/** Whether the kept index exists, holds every passage and was completed (its `_meta.complete`). */
export async function scaleIndexReady(es: EsClient, index: string, passages: number): Promise<boolean> {
  const m = await es.indices.getMapping({ index }).catch(() => undefined);
  if (!(m?.[index]?.mappings._meta as { complete?: boolean } | undefined)?.complete) return false;
  // The last run closed it (bench/search-scale.ts); a closed index cannot be counted.
  await es.indices.open({ index });
  return (await es.count({ index })).count === passages;
}

/**
 * Builds the index, or resumes a build an earlier run left unfinished: docsIndexBody's settings and mapping
 * (`body` overrides it for the index-options lab), bulk requests of 1,000 passages two at a time, refresh off and
 * no replica (as docsIndexBody makes it), translog synced asynchronously while seeding. Not force-merged unless
 * `segments` says so: docent's ingest does not force-merge either, and merging a million vectors into one HNSW
 * graph costs as much again as seeding them.
 */
export async function buildScaleIndex(
  es: EsClient,
  opts: { index: string; seed: SeedMaterial; passages: number; body?: ReturnType<typeof docsIndexBody>; segments?: number; log?: (line: string) => void },
): Promise<{ seedSeconds: number; mergeSeconds: number; resumedAt: number }> {
  const log = opts.log ?? (() => undefined);
  const body = opts.body ?? docsIndexBody(opts.seed.vectors[0]!.length);
  let resumedAt = 0;
  if (await es.indices.exists({ index: opts.index })) {
    // The last run closed it (bench/search-scale.ts).
    await es.indices.open({ index: opts.index });
    // Passages are generated in order with fixed ids: what an interrupted build indexed is counted and re-sent from
    // two bulk requests before it (those may have been in flight), overwriting the same ids.
    await es.indices.refresh({ index: opts.index });
    const count = (await es.count({ index: opts.index })).count;
    resumedAt = Math.max(0, Math.floor(count / bulkDocs) * bulkDocs - bulkInFlight * bulkDocs);
    log(`resuming the build at passage ${resumedAt} (${count} indexed)`);
  } else {
    await es.indices.create({ index: opts.index, settings: { ...body.settings, 'index.translog.durability': 'async' }, mappings: body.mappings });
  }
  const t0 = performance.now();
  const inFlight = new Set<Promise<void>>();
  let batch: unknown[] = [];
  let sent = resumedAt;
  const send = (operations: unknown[]) => {
    // A loaded machine can take minutes over one request; a retry of it would only add to the load.
    const p = es.bulk({ operations }, { requestTimeout: 600_000, maxRetries: 0 }).then((r) => {
      if (r.errors) throw new Error(`bulk seeding failed: ${JSON.stringify(r.items.find((x) => x.index?.error)?.index?.error)}`);
      sent += operations.length / 2;
      if (sent % 50_000 < bulkDocs) log(`seeded ${sent} passages, ${((sent - resumedAt) / ((performance.now() - t0) / 1000)).toFixed(0)}/s`);
    });
    const tracked = p.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
    return tracked;
  };
  let i = 0;
  for (const { chunk, vector } of scalePassages(opts.seed, opts.passages)) {
    if (i++ < resumedAt) continue;
    batch.push({ index: { _index: opts.index, _id: chunk.id } }, scaleDocument(chunk, vector));
    if (batch.length === bulkDocs * 2) {
      if (inFlight.size >= bulkInFlight) await Promise.race(inFlight);
      send(batch);
      batch = [];
    }
  }
  if (batch.length) send(batch);
  await Promise.all(inFlight);
  const seedSeconds = (performance.now() - t0) / 1000;
  const t1 = performance.now();
  await es.indices.putSettings({ index: opts.index, settings: { refresh_interval: '1s', 'index.translog.durability': 'request' } });
  await es.indices.refresh({ index: opts.index }, { requestTimeout: 600_000 });
  if (opts.segments) await es.indices.forcemerge({ index: opts.index, max_num_segments: opts.segments, wait_for_completion: true }, { requestTimeout: 3_600_000 });
  await es.indices.putMapping({ index: opts.index, _meta: { complete: true } });
  return { seedSeconds, mergeSeconds: (performance.now() - t1) / 1000, resumedAt };
}

/** Kept scale indexes other than `keep` (an earlier generator or mapping): deleted so their disk comes back. */
export async function deleteStaleScaleIndexes(es: EsClient, keep: string): Promise<string[]> {
  const names = Object.keys(await es.indices.get({ index: 'docent-bench-scale-*' }).catch(() => ({}))).filter((n) => n !== keep);
  if (names.length) await es.indices.delete({ index: names.join(',') });
  return names;
}
