// thread-append: one assistant turn stored through ThreadStore.appendTurn vs the same MongoDB update with the driver.
import { maxThreadTurns, ThreadStore, newThreadId, type ThreadDoc, type TurnDoc } from '../src/assistant/threads';
import { createMongo } from '../src/store/mongo';
import type { Benchmark } from './lib/bench';
import { alternate, closedLoop, p50s, p99s, pooled } from './lib/blocks';
import type { Row } from './lib/report';
import { runId } from './lib/stack';
import { fmtMs, fmtRatio, median, medianRatio } from './lib/stats';
import { loadConfig } from '../src/config';

const rounds = 7;
const opsPerBlock = (c: number) => (c === 1 ? 25 : 64);
// One thread per append, roughly: threads stay small, as real conversations do, and FerretDB rewrites whole documents.
const threadsCount = 2 * (rounds + 1) * (opsPerBlock(1) + opsPerBlock(16));

/** A turn of realistic size: a 1.5 kB answer, five sources, timings and usage. */
function turn(i: number): TurnDoc {
  return {
    userMessage: `how do I install from the lockfile (${i})?`,
    sources: Array.from({ length: 5 }, (_, s) => ({
      id: String(s + 1),
      path: `commands/npm-${s}`,
      url: `https://docs.bench.test/commands/npm-${s}#description`,
      title: `npm-${s} › Description`,
      score: 10 - s,
    })),
    answer: 'Run `npm ci` [1]. '.repeat(80),
    model: 'openai-compatible:bench',
    status: 'completed',
    usage: { promptTokens: 1200, completionTokens: 300 },
    timings: { retrievalMs: 12.3, firstTokenMs: 320.1, totalMs: 900.4 },
    createdAt: new Date(),
  };
}

export const threadAppend: Benchmark = {
  name: 'thread-append',
  summary: 'ThreadStore.appendTurn vs the same updateOne with the driver',
  async run(ctx) {
    const config = loadConfig({ ...process.env, DOCENT_MONGO_DB: `docent_bench_${runId()}` });
    const mongo = createMongo(config.mongo.url, config.mongo.db, config.dependencyTimeoutMs);
    const rows: Row[] = [];
    try {
      const threads = mongo.db.collection<ThreadDoc>('threads');
      const ids = Array.from({ length: threadsCount }, () => newThreadId());
      const now = new Date();
      await threads.insertMany(ids.map((_id) => ({ _id, domain: 'docs.bench.test', fp: 'anonymous', createdAt: now, updatedAt: now, turns: [] })));
      const store = new ThreadStore(mongo.db);
      let next = 0;
      const subject = () => store.appendTurn(ids[next++ % threadsCount]!, turn(next));
      // The same guarded update the store sends: the turn is pushed only while the thread holds fewer than its cap.
      const notFull = { [`turns.${maxThreadTurns - 1}`]: { $exists: false } };
      const floor = () => threads.updateOne({ _id: ids[next++ % threadsCount]!, ...notFull }, { $push: { turns: turn(next) }, $set: { updatedAt: new Date() } });
      for (const c of [1, 16]) {
        const n = opsPerBlock(c);
        const r = await alternate({ rounds, baseline: () => closedLoop(floor, { concurrency: c, ops: n }), subject: () => closedLoop(subject, { concurrency: c, ops: n }) });
        const ratio = medianRatio(p50s(r.subject), p50s(r.baseline));
        rows.push({
          bench: 'thread-append',
          case: `c=${c}`,
          ratio: `p50 ${fmtRatio(ratio)}, p99 ${fmtRatio(medianRatio(p99s(r.subject), p99s(r.baseline)))}`,
          target: '≤ 1.1×',
          met: ratio <= 1.1,
          subject: `p50 ${fmtMs(median(p50s(r.subject)))}, p99 ${fmtMs(pooled(r.subject, 99))}`,
          baseline: `p50 ${fmtMs(median(p50s(r.baseline)))}, p99 ${fmtMs(pooled(r.baseline, 99))}`,
        });
        ctx.log(`${rows.at(-1)!.case}: ${rows.at(-1)!.ratio}`);
      }
      return {
        rows,
        notes: [
          `${threadsCount} threads, each append to the next thread in turn (one turn per thread, about); a 1.5 kB answer with five sources per turn; ` +
            `${rounds} pairs of blocks of ${opsPerBlock(1)} (c=1) or ${opsPerBlock(16)} (c=16) appends after a warm-up pair. ` +
            "ThreadStore.appendTurn issues exactly the floor's updateOne, so a ratio away from 1 is FerretDB's write queue (SQLite, one writer) and block order, not code.",
        ],
      };
    } finally {
      await mongo.db.dropDatabase().catch(() => undefined);
      await mongo.client.close();
    }
  },
};
