// job-create-throughput: accepted creates per second over REST at c=16 (limit raised, no worker) vs a raw loop of
// the floor calls (MongoDB insert + workflow start) at c=16, in alternating blocks.
import type { Benchmark } from './lib/bench';
import { alternate, closedLoop, rates } from './lib/blocks';
import { restCreate, startJobBench } from './lib/jobs';
import { runId } from './lib/stack';
import { fmtRate, fmtRatio, median, medianRatio } from './lib/stats';

const concurrency = 16;
const rounds = 6;
const blockMs = 5_000; // 6 × 5 s = 30 s of subject, and as much of floor

export const jobCreateThroughput: Benchmark = {
  name: 'job-create-throughput',
  summary: 'accepted REST creates/s at c=16 vs the raw floor loop at c=16',
  async run(ctx) {
    const b = await startJobBench(runId(), { limits: true });
    const slotsBefore = await b.gw.deps.mongo.db.collection('rate_limit_slots').countDocuments();
    let r: Awaited<ReturnType<typeof alternate>>;
    try {
      const subject = restCreate(b);
      r = await alternate({
        rounds,
        warmup: false,
        baseline: () => closedLoop(b.floorCreate, { concurrency, durationMs: blockMs }),
        subject: () => closedLoop(subject, { concurrency, durationMs: blockMs }),
      });
      const slots = (await b.gw.deps.mongo.db.collection('rate_limit_slots').countDocuments()) - slotsBefore;
      const subjectRates = rates(r.subject);
      ctx.log(
        `subject blocks: ${subjectRates.map((x) => x.toFixed(0)).join(', ')} jobs/s; floor: ${rates(r.baseline)
          .map((x) => x.toFixed(0))
          .join(', ')}`,
      );
      const ratio = medianRatio(subjectRates, rates(r.baseline));
      const errors = r.subject.reduce((n, x) => n + x.errors, 0);
      return {
        rows: [
          {
            bench: 'job-create-throughput',
            case: `REST c=${concurrency}, limits on`,
            ratio: fmtRatio(ratio),
            target: '≥ 0.85× floor',
            met: ratio >= 0.85,
            subject: `${fmtRate(median(subjectRates), 'jobs/s')} (blocks ${subjectRates.map((x) => x.toFixed(0)).join(', ')}; ${errors} errors)`,
            baseline: `${fmtRate(median(rates(r.baseline)), 'jobs/s')} (blocks ${rates(r.baseline)
              .map((x) => x.toFixed(0))
              .join(', ')})`,
          },
        ],
        notes: [
          `${rounds} alternating pairs of ${blockMs / 1000} s blocks (30 s of subject in total, as specified). The limit window held ${slots} slots at the end: ` +
            'a hot window is claimed up to 32 slots per insert, ahead of use (docs/decisions/2026-11-21-tenancy-and-limits.md), so a create pays no limiter round trip of its own.',
        ],
      };
    } finally {
      await b.stop();
    }
  },
};
