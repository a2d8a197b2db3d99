// docs-search-latency: POST /discovery/v1/search/{d} top-5 on a 10,000-chunk corpus vs the same retrieval run
// in-process with the gateway's own clients and model (embed the question, one msearch, fuse), c=1 and c=16.
import { retrieveChunks } from '../src/search/docs-index';
import { startGateway } from '../test/support/gateway';
import type { Benchmark } from './lib/bench';
import { alternate, closedLoop, p50s, p99s, pooled } from './lib/blocks';
import { corpusQueries, indexCorpus } from './lib/corpus';
import { jsonPoster } from './lib/post-json';
import type { Row } from './lib/report';
import { benchEnv, deleteIndexes, runId } from './lib/stack';
import { fmtMs, fmtRatio, median, medianRatio } from './lib/stats';
import { failedShown, judgedRow, scaledFloorGoal } from './lib/goals';

const chunks = 10_000;
const pageSize = 5;
const rounds = 4;
const opsPerBlock = (c: number) => (c === 1 ? 25 : 96);

export const docsSearchLatency: Benchmark = {
  name: 'docs-search-latency',
  summary: `REST search top-${pageSize} over ${chunks} chunks vs the same retrieval in-process`,
  async run(ctx) {
    const run = runId();
    const domain = `docs-${run}.bench.test`;
    const gw = await startGateway(benchEnv(run));
    const { es, config } = gw.deps;
    const prefix = config.elasticsearch.indexPrefix;
    try {
      const t = performance.now();
      await indexCorpus(es, prefix, domain, chunks, (await gw.deps.embedder?.())?.dims);
      ctx.log(`indexed ${chunks} chunks in ${((performance.now() - t) / 1000).toFixed(1)} s`);
      const key = (await gw.deps.keys.create({ kind: 'assistant', orgId: `org-${run}`, domain })).key;
      // docent's own shape (`{results, searchId}`); the bare path answers Mintlify's array (docs/assistant.md).
      const url = `${gw.url}/discovery/v1/search/${domain}/results`;
      const headers = { authorization: `Bearer ${key}` };
      const post = jsonPoster();
      const subject = async (i: number) => {
        const r = await post(url, headers, JSON.stringify({ query: corpusQueries[i % corpusQueries.length], pageSize }));
        const body = JSON.parse(r.text) as { results?: unknown[] };
        if (r.status !== 200 || body.results?.length !== pageSize) throw new Error(`search answered ${r.status} with ${body.results?.length} results`);
      };
      // The retrieval the gateway runs for this request, without HTTP, authentication, validation or encoding.
      const retrieval = { es, indexPrefix: prefix, embedder: gw.deps.embedder };
      const floor = async (i: number) => {
        await retrieveChunks(retrieval, { domain, query: corpusQueries[i % corpusQueries.length]!, pageSize });
      };
      const rows: Row[] = [];
      for (const c of [1, 16]) {
        const n = opsPerBlock(c);
        const r = await alternate({ rounds, baseline: () => closedLoop(floor, { concurrency: c, ops: n }), subject: () => closedLoop(subject, { concurrency: c, ops: n }) });
        const s50 = median(p50s(r.subject));
        const f50 = median(p50s(r.baseline));
        rows.push({
          bench: 'docs-search-latency',
          case: `REST c=${c}`,
          ratio: `p50 ${fmtRatio(medianRatio(p50s(r.subject), p50s(r.baseline)))}, p99 ${fmtRatio(medianRatio(p99s(r.subject), p99s(r.baseline)))}`,
          target: 'p50 ≤ 1.2× floor + 1 ms, no request failed',
          ...judgedRow(scaledFloorGoal(r.subject, r.baseline, 1.2, 1)),
          subject: `p50 ${fmtMs(s50)}, p99 ${fmtMs(pooled(r.subject, 99))}; ${failedShown(r.subject) || 'none failed'}`,
          baseline: `p50 ${fmtMs(f50)}, p99 ${fmtMs(pooled(r.baseline, 99))}; ${failedShown(r.baseline) || 'none failed'}`,
        });
        ctx.log(`${rows.at(-1)!.case}: ${rows.at(-1)!.ratio}`);
      }
      return {
        rows,
        notes: [
          `${chunks} synthetic chunks (${chunks / 8} pages, one shard, force-merged, seeded random vectors); ${rounds} pairs of blocks of ${opsPerBlock(1)} (c=1) or ${opsPerBlock(16)} (c=16) searches after a warm-up pair, 5 queries in turn.` +
            ' The subject adds HTTP, key authentication (one MongoDB read), validation and JSON encoding of the passages; its client is node:http (lib/post-json.ts).',
        ],
      };
    } finally {
      await deleteIndexes(es, prefix).catch(() => undefined);
      await gw.stop();
    }
  },
};
