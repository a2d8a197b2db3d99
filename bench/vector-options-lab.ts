// Index options of the passage vectors (docs/decisions/2026-11-27-search-at-a-million.md): builds the search-scale
// corpus once per option and measures kNN recall@10 against exact nearest neighbours (computed here over the same
// generated vectors), kNN latency as retrieval asks (k 30, num_candidates 100 and more), build time and index size.
// Run: tsc -p tsconfig.bench.json && SIZE=200000 ONLY=int8_hnsw,bbq_hnsw node dist/bench/vector-options-lab.js
// The indexes are named docent-vector-lab-* and deleted at the end (KEEP=1 keeps them). INDEX=<name> measures an
// index already built from the same corpus (e.g. search-scale's kept docent-bench-scale-1000000-…) instead of building.
import { loadConfig } from '../src/config';
import { docsIndexBody } from '../src/search/docs-index';
import { Embedder } from '../src/search/embedder';
import { createEsClient } from '../src/search/es-client';
import { heldOutQuestions, tuningQuestions } from '../test/support/retrieval-questions';
import { buildScaleIndex, scalePassages, seedMaterial } from './lib/scale-corpus';
import { percentile } from './lib/stats';

const options: Record<string, object> = {
  hnsw: { type: 'hnsw', m: 16, ef_construction: 100 },
  int8_hnsw: { type: 'int8_hnsw', m: 16, ef_construction: 100 },
  int4_hnsw: { type: 'int4_hnsw', m: 16, ef_construction: 100 },
  bbq_hnsw: { type: 'bbq_hnsw', m: 16, ef_construction: 100 },
};

async function main() {
  const size = Number(process.env.SIZE ?? 200_000);
  const only = process.env.ONLY?.split(',') ?? ['int8_hnsw', 'int4_hnsw', 'bbq_hnsw'];
  const candidates = (process.env.CANDIDATES ?? '100,200').split(',').map(Number);
  const config = loadConfig({ ...process.env, DOCENT_LOG_LEVEL: 'silent' });
  const es = createEsClient(config.elasticsearch);
  const embedder = await Embedder.load(config.embeddingModelDir!);
  const seed = await seedMaterial(embedder);
  const questions = [...tuningQuestions, ...heldOutQuestions].map(([q]) => q);
  const qv = await embedder.embedMany(questions);

  // Exact top-10 per question, over the generated vectors in order.
  const t = performance.now();
  const best = qv.map(() => [] as Array<{ id: string; s: number }>);
  for (const { chunk, vector } of scalePassages(seed, size)) {
    for (let q = 0; q < qv.length; q++) {
      let s = 0;
      const v = qv[q]!;
      for (let d = 0; d < v.length; d++) s += v[d]! * vector[d]!;
      const b = best[q]!;
      if (b.length < 10 || s > b[9]!.s) {
        b.push({ id: chunk.id, s });
        b.sort((x, y) => y.s - x.s);
        if (b.length > 10) b.pop();
      }
    }
  }
  console.log(`exact top-10 of ${qv.length} questions over ${size} vectors in ${((performance.now() - t) / 1000).toFixed(1)} s`);

  const lines: string[] = ['| index options | build s (seed + merge) | store MB | bytes/passage | num_candidates | recall@10 | kNN p50 ms | kNN p99 ms |', '|---|---|---|---|---|---|---|---|'];
  for (const name of process.env.INDEX ? [process.env.INDEX] : only) {
    const index = process.env.INDEX ?? `docent-vector-lab-${name}`;
    const body = docsIndexBody(embedder.dims);
    (body.mappings.properties as Record<string, Record<string, unknown>>).embedding!.index_options = options[name];
    const built = process.env.INDEX
      ? { seedSeconds: NaN, mergeSeconds: NaN }
      : await buildScaleIndex(es, { index, seed, passages: size, body, segments: 1, log: (l) => console.log(`  ${name}: ${l}`) });
    const segments = (await es.indices.stats({ index, metric: 'segments' }))._all.primaries?.segments?.count;
    const stats = await es.indices.stats({ index, metric: 'store' });
    const bytes = stats._all.primaries?.store?.size_in_bytes ?? 0;
    for (const nc of candidates) {
      let hits = 0;
      const lat: number[] = [];
      for (let round = 0; round < 3; round++) {
        for (let q = 0; q < qv.length; q++) {
          const t0 = performance.now();
          const r = await es.search({ index, size: 30, _source: false, knn: { field: 'embedding', query_vector: Array.from(qv[q]!), k: 30, num_candidates: nc } });
          lat.push(performance.now() - t0);
          if (round === 0) {
            const got = new Set(r.hits.hits.slice(0, 10).map((h) => h._id));
            hits += best[q]!.filter((x) => got.has(x.id)).length;
          }
        }
      }
      lines.push(
        `| ${name} ${JSON.stringify(options[name] ?? '(as built)')}, ${segments} segment(s) | ${built.seedSeconds.toFixed(0)} + ${built.mergeSeconds.toFixed(0)} | ${(bytes / 2 ** 20).toFixed(0)} | ${(bytes / size).toFixed(0)} | ${nc} | ${(hits / (qv.length * 10)).toFixed(3)} | ${percentile(lat, 50).toFixed(1)} | ${percentile(lat, 99).toFixed(1)} |`,
      );
      console.log(lines.at(-1));
    }
    if (!process.env.KEEP && !process.env.INDEX) await es.indices.delete({ index });
  }
  console.log(
    `\n${size} passages, ${qv.length} questions, load ${(await import('node:os'))
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}\n${lines.join('\n')}`,
  );
  await es.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
