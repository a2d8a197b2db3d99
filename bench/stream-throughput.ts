// stream-throughput: (1) text deltas per second of one v2 stream with a zero-delay model; (2) the inter-token delay
// added across 100 concurrent v2 streams of a model pacing 100 tokens/s. Floor: the bare SSE writer fed the same model.
import type { Benchmark } from './lib/bench';
import { readStream, type StreamTiming } from './lib/bare-sse';
import { alternate, type Block } from './lib/blocks';
import { startAssistantBench, type AssistantBench } from './lib/assistant';
import { scriptedQuestion } from './lib/model';
import type { Row } from './lib/report';
import { fmtMs, fmtRate, fmtRatio, median, medianDifference, medianRatio, percentile } from './lib/stats';

const bigTokens = 2_000;
const streams = 100;
const pacedTokens = 100;
const paceMs = 10;

const deltasPerSecond = (t: StreamTiming) => (t.deltaTimes.length - 1) / ((t.deltaTimes.at(-1)! - t.deltaTimes[0]!) / 1000);
/** Gaps between consecutive deltas as the client sees them (deltas of one read have a gap of 0). */
const gaps = (t: StreamTiming) => t.deltaTimes.slice(1).map((x, i) => x - t.deltaTimes[i]!);

async function oneStream(a: AssistantBench, bare: boolean, question: string): Promise<StreamTiming> {
  const r = bare ? a.bareRequest(question, false) : a.request('v2', question);
  return readStream(r.url, r, 'v2');
}

export const streamThroughput: Benchmark = {
  name: 'stream-throughput',
  summary: `deltas/s of one v2 stream (zero-delay model); added inter-token delay over ${streams} concurrent streams at ${1000 / paceMs} tokens/s`,
  async run(ctx) {
    const a = await startAssistantBench(ctx, 500);
    const rows: Row[] = [];
    try {
      // (1) one stream at a time, 3 streams per block; the figure of a block is its median deltas/s.
      const big = scriptedQuestion('how do I install from the lockfile', { tokens: bigTokens });
      const rateBlock = (bare: boolean) => async (): Promise<Block> => {
        const rs: number[] = [];
        for (let i = 0; i < 3; i++) rs.push(deltasPerSecond(await oneStream(a, bare, big)));
        return { latencies: rs, ops: rs.length, errors: 0, seconds: 0 };
      };
      const r1 = await alternate({ rounds: 4, baseline: rateBlock(true), subject: rateBlock(false) });
      const sRate = r1.subject.map((b) => median(b.latencies));
      const fRate = r1.baseline.map((b) => median(b.latencies));
      const ratio1 = medianRatio(sRate, fRate);
      rows.push({
        bench: 'stream-throughput',
        case: `one v2 stream, ${bigTokens} deltas, zero-delay model`,
        ratio: fmtRatio(ratio1),
        target: '≥ 0.5× the bare writer',
        met: ratio1 >= 0.5,
        subject: fmtRate(median(sRate), 'deltas/s'),
        baseline: fmtRate(median(fRate), 'deltas/s'),
      });
      ctx.log(`${rows.at(-1)!.case}: ${rows.at(-1)!.ratio}`);

      // (2) 100 concurrent streams; a block's figure is the p99 of every added gap of every stream.
      const paced = scriptedQuestion('publish a package to the registry', { tokens: pacedTokens, delayMs: paceMs });
      const gapBlock = (bare: boolean) => async (): Promise<Block> => {
        const t = performance.now();
        const all = await Promise.all(Array.from({ length: streams }, () => oneStream(a, bare, paced)));
        return { latencies: all.flatMap(gaps), ops: all.length, errors: 0, seconds: (performance.now() - t) / 1000 };
      };
      const r2 = await alternate({ rounds: 2, warmup: false, baseline: gapBlock(true), subject: gapBlock(false) });
      const s99 = r2.subject.map((b) => percentile(b.latencies, 99));
      const f99 = r2.baseline.map((b) => percentile(b.latencies, 99));
      // What docent adds to the client's p99 gap over what the bare writer on the same machine shows.
      const added = medianDifference(s99, f99);
      rows.push({
        bench: 'stream-throughput',
        case: `${streams} concurrent v2 streams at ${1000 / paceMs} tokens/s: inter-token gap`,
        ratio: `p99 ${fmtRatio(medianRatio(s99, f99))}; added p99 ${fmtMs(added)}`,
        target: 'p99 added delay ≤ 10 ms',
        met: added <= 10,
        subject: `p99 gap ${fmtMs(median(s99))} (pace ${paceMs} ms), p50 ${fmtMs(median(r2.subject.map((b) => percentile(b.latencies, 50))))}`,
        baseline: `p99 gap ${fmtMs(median(f99))}, p50 ${fmtMs(median(r2.baseline.map((b) => percentile(b.latencies, 50))))}`,
      });
      ctx.log(`${rows.at(-1)!.case}: ${rows.at(-1)!.ratio}`);
    } finally {
      await a.stop();
    }
    return {
      rows,
      notes: [
        `Part 1: 4 pairs of blocks of 3 streams after a warm-up pair; the bare writer streams the same model through the AI SDK with no retrieval (the rate counts deltas between the first and the last).` +
          ` Part 2: 2 pairs of blocks (no warm-up) of ${streams} simultaneous streams of ${pacedTokens} tokens, ${paceMs} ms apart; a gap is the time between two deltas as the client reads them ` +
          '(deltas that arrive in one read have a gap of 0, so a late delta shows as a long gap); added delay = median over pairs of subject p99 gap minus floor p99 gap; ' +
          'client, gateway and bare writer share one process and the model runs in another, so the floor itself shows what two cores add.',
      ],
    };
  },
};
