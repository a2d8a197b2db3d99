// Re-ranking lab (issue 15 part 6): the hybrid candidates of every question are fetched once, then each re-ranking
// variant is scored on all sets. Held-out counts are printed only for variants that beat the adopted ranking on the
// tuning sets, so that they judge a choice and cannot make it. Vectors are cached in the temp folder between runs.
// Run: tsc -p tsconfig.bench.json && ONLY=M_base,mmr SHOW=1 node dist/bench/rerank-lab.js
// (ONLY: name prefixes; SHOW: tuning misses; SIZE: candidates per list; SIM=jaccard; SENT=off|plain|ctx|ctx2; PER_PAGE).
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createEsClient } from '../src/search/es-client';
import { loadConfig } from '../src/config';
import type { DocChunk } from '../src/docs/chunk';
import { chunkDocument, diversify, docsIndexBody, docsIndexName, type Passage } from '../src/search/docs-index';
import { Embedder, embeddingText } from '../src/search/embedder';
import { fuseRanks, strictKeywordQuery, vectorSearch } from '../src/search/hybrid';
import { dot } from '../src/search/vector-math';
import { npmDocChunks } from './lib/npm-docs';
import { heldOutQuestions, heldOutQuestions2, heldOutQuestions3, identifierQueries, tuningQuestions, tuningQuestions2 } from '../test/support/retrieval-questions';

export function sentencesOf(text: string): string[] {
  return text
    .split(/(?<=[.!?:])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.length >= 15);
}

interface Cand {
  id: string;
  path: string;
  rrf: number;
  vRank?: number;
  kRank?: number;
  cos: number;
  bm25?: number;
}
type Variant = (c: Cand[], q: Float32Array) => Array<{ id: string; score: number }>;

async function main() {
  const config = loadConfig({ ...process.env, DOCENT_LOG_LEVEL: 'silent' });
  const es = createEsClient(config.elasticsearch);
  const embedder = await Embedder.load(config.embeddingModelDir!);
  const chunks: DocChunk[] = await npmDocChunks();
  const byId = new Map(chunks.map((c) => [c.id, c]));
  let t = performance.now();
  const cached = async (name: string, texts: string[]): Promise<Float32Array[]> => {
    const file = path.join(tmpdir(), `rerank-lab-${name}.json`);
    const hit = await readFile(file, 'utf8').then(
      (s) => JSON.parse(s) as { texts: string[]; v: number[][] },
      () => undefined,
    );
    if (hit && JSON.stringify(hit.texts) === JSON.stringify(texts)) return hit.v.map((x) => Float32Array.from(x));
    const v = await embedder.embedMany(texts);
    await writeFile(file, JSON.stringify({ texts, v: v.map((x) => Array.from(x)) }));
    return v;
  };
  const vectors = await cached('passages', chunks.map(embeddingText));
  console.log(`passages: ${chunks.length} in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const vec = new Map(chunks.map((c, i) => [c.id, vectors[i]!]));
  const pageText = (c: DocChunk) => (c.description ? `${c.title}: ${c.description}.` : `${c.title}.`);
  const labelText = (c: DocChunk) => `${pageText(c)}${c.headings.length ? ` ${c.headings.join(' - ')}` : ''}`;
  const sentMode = process.env.SENT ?? 'ctx';
  const sentVec = new Map<string, Float32Array[]>();
  if (process.env.SENT !== 'off') {
    t = performance.now();
    let n = 0;
    const texts: string[] = [];
    const spans: Array<[string, number, number]> = [];
    for (const c of chunks) {
      const ctx = sentMode === 'ctx2' ? `${labelText(c)}: ` : `${c.title}${c.headings.length ? ` - ${c.headings.join(' - ')}` : ''}: `;
      const ss = sentencesOf(c.text).slice(0, 40);
      spans.push([c.id, texts.length, texts.length + ss.length]);
      texts.push(...ss.map((s) => (sentMode === 'plain' ? s : ctx + s)));
    }
    n = texts.length;
    const all = await cached(`sent-${sentMode}`, texts);
    for (const [id, a, b] of spans) sentVec.set(id, all.slice(a, b));
    console.log(`sentences: ${n} in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }
  const pages = [...new Map(chunks.map((c) => [c.path, c])).values()];
  const pageVecs = await cached('pages', pages.map(pageText));
  const pageVec = new Map(pages.map((c, i) => [c.path, pageVecs[i]!]));
  const labelVecs = await cached('labels', chunks.map(labelText));
  const labelVec = new Map(chunks.map((c, i) => [c.id, labelVecs[i]!]));
  const run = randomBytes(4).toString('hex');
  const index = docsIndexName(`lab-${run}`, 'lab', run);
  await es.indices.create({ index, ...docsIndexBody(embedder.dims) });
  await es.bulk({ operations: chunks.flatMap((c, i) => [{ index: { _index: index, _id: c.id } }, chunkDocument(c, vectors[i])]) });
  await es.indices.refresh({ index });

  const size = Number(process.env.SIZE ?? 30);
  const candidates = async (q: string): Promise<{ qv: Float32Array; cands: Cand[] }> => {
    const qv = (await embedder.embedMany([q]))[0]!;
    const { responses } = await es.msearch({
      searches: [{ index }, { size, knn: vectorSearch(qv, size, []), _source: ['path'] }, { index }, { size, query: strictKeywordQuery(q, [], []), _source: ['path'] }],
    });
    const hits = responses.map((r) => ('error' in r ? [] : r.hits.hits));
    const lists = hits.map((h) => ({ ids: h.map((x) => x._id!), weight: 1 }));
    const fused = fuseRanks(lists);
    const vRank = new Map(lists[0]!.ids.map((id, i) => [id, i]));
    const kRank = new Map(lists[1]!.ids.map((id, i) => [id, i]));
    const bm = new Map(hits[1]!.map((h) => [h._id!, h._score ?? 0]));
    return {
      qv,
      cands: fused.map(({ id, score }) => ({ id, path: byId.get(id)!.path, rrf: score, vRank: vRank.get(id), kRank: kRank.get(id), cos: dot(qv, vec.get(id)!), bm25: bm.get(id) })),
    };
  };
  const sets = [
    ['tuning', tuningQuestions, true],
    ['tuning2', tuningQuestions2, true],
    ['held1', heldOutQuestions, false],
    ['held2', heldOutQuestions2, false],
    ['held3', heldOutQuestions3, false],
    ['ids', identifierQueries, true],
  ] as const;
  const cache = new Map<string, { qv: Float32Array; cands: Cand[] }>();
  for (const [, set] of sets) for (const [q] of set) cache.set(q, await candidates(q));

  const maxSim = (id: string, qv: Float32Array) => Math.max(-1, ...(sentVec.get(id) ?? []).map((s) => dot(qv, s)));
  const byScore = (c: Cand[], f: (x: Cand, i: number) => number) => c.map((x, i) => ({ id: x.id, score: f(x, i) })).sort((a, b) => b.score - a.score);
  const rrfOf = (order: string[], w = 1, k = 60) => new Map(order.map((id, i) => [id, w / (k + i + 1)]));
  const pageAgg =
    (g: number): Variant =>
    (c) => {
      const page = new Map<string, number[]>();
      for (const x of c) page.set(x.path, [...(page.get(x.path) ?? []), x.rrf]);
      const ps = new Map([...page].map(([p, s]) => [p, s[0]! + g * s.slice(1).reduce((a, b) => a + b, 0)]));
      return byScore(c, (x) => ps.get(x.path)! + x.rrf * 1e-3);
    };
  const extraList =
    (f: (x: Cand, qv: Float32Array) => number, n: number, w: number): Variant =>
    (c, qv) => {
      const order = [...c.slice(0, n)].sort((a, b) => f(b, qv) - f(a, qv)).map((x) => x.id);
      const r = rrfOf(order, w);
      return byScore(c, (x) => x.rrf + (r.get(x.id) ?? 0));
    };
  const pageCos = (x: Cand, qv: Float32Array) => dot(qv, pageVec.get(x.path)!) + 1e-3 * x.rrf;
  const labelCos = (x: Cand, qv: Float32Array) => dot(qv, labelVec.get(x.id)!);
  const grid = (name: string, f: (x: Cand, qv: Float32Array) => number) => Object.fromEntries([20, 30].flatMap((n) => [0.5, 1].map((w) => [`${name}${n}w${w}`, extraList(f, n, w)])));
  // Near-duplicates of a passage already ranked (generated option sections repeated across pages) go to the end.
  const dedupe =
    (th: number): Variant =>
    (c) => {
      const kept: Cand[] = [];
      const dup: Cand[] = [];
      for (const x of c) (kept.some((k) => dot(vec.get(k.id)!, vec.get(x.id)!) > th) ? dup : kept).push(x);
      return [...kept, ...dup].map((x, i) => ({ id: x.id, score: 1000 - i }));
    };
  const textDedupe: Variant = (c) => {
    const seen = new Set<string>();
    const kept: Cand[] = [];
    const dup: Cand[] = [];
    for (const x of c) {
      const t = byId.get(x.id)!.text.trim();
      (seen.has(t) ? dup : kept).push(x);
      seen.add(t);
    }
    return [...kept, ...dup].map((x, i) => ({ id: x.id, score: 1000 - i }));
  };
  const words = new Map(chunks.map((c) => [c.id, new Set(c.text.toLowerCase().match(/[a-z0-9_-]+/g) ?? [])]));
  const jaccard = (a: string, b: string) => {
    const x = words.get(a)!;
    const y = words.get(b)!;
    let i = 0;
    for (const w of x) if (y.has(w)) i++;
    return i / (x.size + y.size - i || 1);
  };
  const simFn = process.env.SIM === 'jaccard' ? jaccard : (a: string, b: string) => dot(vec.get(a)!, vec.get(b)!);
  const mmr =
    (lambda: number, n = 1000): Variant =>
    (all) => {
      const c = all.slice(0, n);
      const max = c[0]?.rrf ?? 1;
      const left = [...c];
      const out: Cand[] = [];
      while (left.length) {
        let bi = 0;
        let bs = -Infinity;
        for (const [i, x] of left.entries()) {
          const red = Math.max(0, ...out.map((o) => simFn(o.id, x.id)));
          const s = lambda * (x.rrf / max) - (1 - lambda) * red;
          if (s > bs) [bs, bi] = [s, i];
        }
        out.push(left.splice(bi, 1)[0]!);
      }
      return [...out, ...all.slice(n)].map((x, i) => ({ id: x.id, score: 1000 - i }));
    };
  const mmrOver = (r: Array<{ id: string; score: number }>, lambda = 0.7, n = 20) => {
    const head = r.slice(0, n);
    const best = head[0]?.score || 1;
    const out: typeof head = [];
    while (head.length) {
      let bi = 0;
      let bs = -Infinity;
      for (const [i, x] of head.entries()) {
        const red = Math.max(0, ...out.map((o) => simFn(o.id, x.id)));
        const sc = (lambda * x.score) / best - (1 - lambda) * red;
        if (sc > bs) [bs, bi] = [sc, i];
      }
      out.push(head.splice(bi, 1)[0]!);
    }
    return [...out, ...r.slice(n)].map((x, i) => ({ id: x.id, score: 1000 - i }));
  };
  const withMmr =
    (v: Variant): Variant =>
    (c, qv) =>
      mmrOver(v(c, qv));
  const base: Variant = (c) => c.map((x) => ({ id: x.id, score: x.rrf }));
  const composed: Record<string, Variant> = {
    M_base: base,
    ...Object.fromEntries(
      [0.5, 0.75, 1.5, 2].map((w) => [`M_kwWeight${w}`, (c: Cand[]) => byScore(c, (x) => (x.vRank == null ? 0 : 1 / (61 + x.vRank)) + (x.kRank == null ? 0 : w / (61 + x.kRank)))]),
    ),
    ...Object.fromEntries([20, 40, 60].flatMap((n) => [0.25, 0.5, 1].map((w) => [`M_maxsim${n}w${w}`, extraList((x, qv) => maxSim(x.id, qv), n, w)]))),
    ...Object.fromEntries([20, 40, 60].flatMap((n) => [0.25, 0.5, 1].map((w) => [`M_maxOfCos${n}w${w}`, extraList((x, qv) => Math.max(x.cos, maxSim(x.id, qv)), n, w)]))),
    ...Object.fromEntries([0.25, 0.5].map((w) => [`M_label20w${w}`, extraList(labelCos, 20, w)])),
    ...Object.fromEntries([0.25, 0.5].map((w) => [`M_page20w${w}`, extraList(pageCos, 20, w)])),
    ...Object.fromEntries(
      [0.3, 0.5, 0.7].map((a) => [
        `M_convex${a}`,
        (c: Cand[]) => {
          const maxBm = Math.max(1e-9, ...c.map((x) => x.bm25 ?? 0));
          return byScore(c, (x) => a * x.cos + (1 - a) * ((x.bm25 ?? 0) / maxBm));
        },
      ]),
    ),
  };
  const variants: Record<string, Variant> = {
    ...Object.fromEntries(Object.entries(composed).map(([k, v]) => [k, withMmr(v)])),
    textDedupe,
    ...Object.fromEntries([0.9, 0.95, 0.98].map((t) => [`dedupe${t}`, dedupe(t)])),
    ...Object.fromEntries([0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9].map((l) => [`mmr${l}`, mmr(l)])),
    ...Object.fromEntries([0.6, 0.65, 0.7, 0.75].flatMap((l) => [10, 20].map((n) => [`mmrTop${n}_${l}`, mmr(l, n)]))),
    ...grid('pageList', pageCos),
    ...grid('labelList', labelCos),
    ...grid('maxLabel', (x, qv) => Math.max(x.cos, labelCos(x, qv))),
    ...grid('sumLabel', (x, qv) => x.cos + labelCos(x, qv)),
    ...grid('maxsimPlusCos', (x, qv) => x.cos + maxSim(x.id, qv)),
    base: (c) => c.map((x) => ({ id: x.id, score: x.rrf })),
    ...Object.fromEntries([10, 20, 30, 100].map((k) => [`rrfK${k}`, (c: Cand[]) => byScore(c, (x) => (x.vRank == null ? 0 : 1 / (k + x.vRank + 1)) + (x.kRank == null ? 0 : 1 / (k + x.kRank + 1)))])),
    ...Object.fromEntries([0.1, 0.3, 0.5, 1].map((g) => [`pageAgg${g}`, pageAgg(g)])),
    ...Object.fromEntries(
      [20, 30].flatMap((n) =>
        [0.5, 1, 2].map((w) => [
          `maxsimRRF${n}w${w}`,
          (c: Cand[], qv: Float32Array) => {
            const top = c.slice(0, n);
            const order = [...top].sort((a, b) => maxSim(b.id, qv) - maxSim(a.id, qv)).map((x) => x.id);
            const r = rrfOf(order, w);
            return byScore(c, (x) => x.rrf + (r.get(x.id) ?? 0));
          },
        ]),
      ),
    ),
    maxsimOnly20: (c, qv) => byScore(c, (x, i) => (i < 20 ? 10 + maxSim(x.id, qv) : x.rrf)),
    maxOfCos20: (c, qv) => byScore(c, (x, i) => (i < 20 ? 10 + Math.max(x.cos, maxSim(x.id, qv)) : x.rrf)),
    ...Object.fromEntries(
      [0.3, 0.5, 0.7].map((a) => [
        `convex${a}`,
        (c: Cand[]) => {
          const maxBm = Math.max(1e-9, ...c.map((x) => x.bm25 ?? 0));
          return byScore(c, (x) => a * x.cos + (1 - a) * ((x.bm25 ?? 0) / maxBm));
        },
      ]),
    ),
  };
  const only = process.env.ONLY?.split(',');
  for (const [name, v] of Object.entries(variants)) {
    if (only && !only.some((o) => name.startsWith(o))) continue;
    const row: string[] = [];
    const misses: string[] = [];
    for (const [sname, set, show] of sets) {
      let hit = 0;
      for (const [q, pages] of set) {
        const { qv, cands } = cache.get(q)!;
        const ranked: Passage[] = v(cands, qv).map(({ id, score }) => ({ id, path: byId.get(id)!.path, url: '', title: '', headings: [], content: '', score }));
        const got = diversify(ranked, 5, Number(process.env.PER_PAGE ?? 2)).map((p) => p.path);
        if (pages.some((p) => got.includes(p))) hit++;
        else if (show && process.env.SHOW) {
          const at = cands.findIndex((x) => pages.includes(x.path));
          const x = cands[at];
          misses.push(
            `  [${sname}] ${q} → ${got.join(', ')}\n     right page first at fused ${at} (${x?.id} v${x?.vRank} k${x?.kRank} cos ${x?.cos.toFixed(3)}); top cos ${cands
              .map((y) => y.cos.toFixed(3))
              .slice(0, 5)
              .join(' ')}`,
          );
        }
      }
      row.push(`${sname} ${hit}/${set.length}`);
    }
    // Held-out counts are printed only for variants that qualify on the tuning sets, so they cannot steer the choice.
    const n = (i: number) => Number(row[i]!.split(' ')[1]!.split('/')[0]);
    const qualifies = n(0) >= 23 && n(1) >= 49 && n(5) === 10 && n(0) + n(1) > 72;
    console.log(`${name.padEnd(16)} ${(qualifies ? row : [row[0], row[1], row[5], '(held-out not shown)']).join('  ')}`);
    if (misses.length) console.log(misses.join('\n'));
  }
  await es.indices.delete({ index }, { ignore: [404] });
  await es.close();
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
