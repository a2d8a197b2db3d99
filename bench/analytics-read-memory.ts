// Peak memory of reading a domain's threads for analytics and gap fixes: the cursor with a projection
// (src/analytics/docs-analytics.ts turnsSince) against the floor it replaced, every whole thread read at once. Each
// side runs in its own process, so its peak RSS (VmHWM, reset before the read) is its own. Prints; never fails.
//   tsc -p tsconfig.bench.json && node dist/bench/analytics-read-memory.js
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import type { Db } from 'mongodb';
import { turnsSince } from '../src/analytics/docs-analytics';
import type { ContextItem } from '../src/assistant/request';
import type { ThreadDoc } from '../src/assistant/threads';
import { loadConfig } from '../src/config';
import { createMongo } from '../src/store/mongo';

const domain = 'docs.bench.test';
const threads = 200;
// What the old bounds allowed each turn to store: 20 context items of 10,000 characters.
const context: ContextItem[] = Array.from({ length: 20 }, (_, i) => ({ type: 'textSelection', value: `${i}`.padEnd(10_000, 'x') }));
const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync('/proc/self/status', 'utf8'))![1]);

async function wholeThreads(db: Db, since: Date): Promise<number> {
  const docs = await db
    .collection<ThreadDoc>('threads')
    .find({ domain, updatedAt: { $gte: since } })
    .sort({ updatedAt: -1 })
    .limit(20_000)
    .toArray();
  return docs.flatMap((t) => t.turns.filter((turn) => turn.createdAt >= since)).length;
}

async function side(name: 'floor' | 'subject', dbName: string): Promise<void> {
  const config = loadConfig({ ...process.env, DOCENT_MONGO_DB: dbName });
  const mongo = createMongo(config.mongo.url, config.mongo.db, config.dependencyTimeoutMs);
  const since = new Date(Date.now() - 86_400_000);
  writeFileSync('/proc/self/clear_refs', '5'); // the peak RSS starts again from the current RSS
  const start = kib('VmRSS');
  const began = performance.now();
  const turns = name === 'floor' ? await wholeThreads(mongo.db, since) : (await turnsSince(mongo.db, domain, since)).turns.length;
  const ms = performance.now() - began;
  console.log(`${name === 'floor' ? 'whole threads (floor)  ' : 'cursor + projection    '} ${turns} turns: peak RSS +${((kib('VmHWM') - start) / 1024).toFixed(0)} MB, ${ms.toFixed(0)} ms`);
  await mongo.client.close();
}

async function main(): Promise<void> {
  const [role, dbName] = process.argv.slice(2);
  if (role === 'floor' || role === 'subject') return side(role, dbName!);
  const config = loadConfig({ ...process.env, DOCENT_MONGO_DB: `docent_bench_${randomBytes(4).toString('hex')}` });
  const mongo = createMongo(config.mongo.url, config.mongo.db, config.dependencyTimeoutMs);
  try {
    const now = new Date();
    for (let i = 0; i < threads; i += 50) {
      await mongo.db.collection<ThreadDoc>('threads').insertMany(
        Array.from({ length: 50 }, (_, j) => ({
          _id: `thr_${i + j}`,
          domain,
          fp: 'anonymous',
          groups: [],
          createdAt: now,
          updatedAt: now,
          turns: [
            {
              userMessage: `question ${i + j}`,
              context,
              sources: [],
              answer: 'a'.repeat(2000),
              model: 'x',
              answered: (i + j) % 3 !== 0,
              status: 'completed',
              timings: { retrievalMs: 1, totalMs: 2 },
              createdAt: now,
            },
          ],
        })),
      );
    }
    console.log(`${threads} threads of one turn with ${context.length} × 10,000 characters of stored context each`);
    for (let round = 0; round < 3; round++) {
      for (const role of ['floor', 'subject']) process.stdout.write(execFileSync(process.execPath, [__filename, role, config.mongo.db], { encoding: 'utf8' }));
    }
  } finally {
    await mongo.db.dropDatabase();
    await mongo.client.close();
  }
}

void main();
