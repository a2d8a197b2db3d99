// job-create-latency: POST /v2/agent/{p}/job (REST) and CreateAgentJob (Connect) vs the floor: the same MongoDB
// insert + client.workflow.start called directly with the same clients. Workers off, so only creation is measured.
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { AgentService } from '../src/gen/agent/v2/agent_pb';
import type { Benchmark } from './lib/bench';
import { alternate, closedLoop, p50s, p99s, pooled } from './lib/blocks';
import { restCreate, startJobBench, type JobBench } from './lib/jobs';
import type { Row } from './lib/report';
import { runId } from './lib/stack';
import { fmtMs, fmtRatio, median, medianRatio } from './lib/stats';
import { failedShown, judgedRow, scaledFloorGoal } from './lib/goals';

// 8 pairs, as in assistant-ttft: with 4, the c=1 ratio moved by ±0.3 between runs minutes apart on this machine.
const rounds = 8;
const opsPerBlock = (c: number) => (c === 1 ? 12 : 32);

function connectCreate(b: JobBench): () => Promise<void> {
  const client = createClient(AgentService, createConnectTransport({ baseUrl: b.gw.url, httpVersion: '1.1' }));
  const headers = { authorization: `Bearer ${b.adminKey}` };
  return async () => {
    await client.createAgentJob({ projectId: b.projectId, prompt: 'benchmark instruction' }, { headers });
  };
}

async function measure(name: string, b: JobBench, op: () => Promise<void>, c: number): Promise<Row> {
  const n = opsPerBlock(c);
  const r = await alternate({
    rounds,
    baseline: () => closedLoop(b.floorCreate, { concurrency: c, ops: n }),
    subject: () => closedLoop(op, { concurrency: c, ops: n }),
  });
  const s50 = median(p50s(r.subject));
  const f50 = median(p50s(r.baseline));
  return {
    bench: 'job-create-latency',
    case: `${name} c=${c}`,
    ratio: `p50 ${fmtRatio(medianRatio(p50s(r.subject), p50s(r.baseline)))}, p99 ${fmtRatio(medianRatio(p99s(r.subject), p99s(r.baseline)))}`,
    target: 'p50 ≤ 1.15× floor + 1 ms, no request failed',
    ...judgedRow(scaledFloorGoal(r.subject, r.baseline, 1.15, 1)),
    subject: `p50 ${fmtMs(s50)}, p99 ${fmtMs(pooled(r.subject, 99))}; ${failedShown(r.subject) || 'none failed'}`,
    baseline: `p50 ${fmtMs(f50)}, p99 ${fmtMs(pooled(r.baseline, 99))}; ${failedShown(r.baseline) || 'none failed'}`,
  };
}

export const jobCreateLatency: Benchmark = {
  name: 'job-create-latency',
  summary: 'REST and Connect job creation vs MongoDB insert + workflow start called directly',
  async run(ctx) {
    const rows: Row[] = [];
    const on = await startJobBench(runId(), { limits: true });
    try {
      for (const c of [1, 8]) {
        rows.push(await measure('REST', on, restCreate(on), c));
        ctx.log(`${rows.at(-1)!.case}: ${rows.at(-1)!.ratio}`);
        rows.push(await measure('Connect', on, connectCreate(on), c));
        ctx.log(`${rows.at(-1)!.case}: ${rows.at(-1)!.ratio}`);
      }
    } finally {
      await on.stop();
    }
    // The same REST path with the rate limiter left out, to show what the limit check costs on this database.
    const off = await startJobBench(runId(), { limits: false });
    try {
      for (const c of [1, 8]) {
        const row = await measure('REST, limits off', off, restCreate(off), c);
        row.note = 'a gateway built without the job quota (not a product setting): the difference to "REST" is the limit check.';
        rows.push(row);
        ctx.log(`${row.case}: ${row.ratio}`);
      }
    } finally {
      await off.stop();
    }
    return {
      rows,
      notes: [
        `${rounds} pairs of blocks of ${opsPerBlock(1)} (c=1) or ${opsPerBlock(8)} (c=8) creates after a warm-up pair; no worker polls, so each created workflow waits and is terminated at the end.`,
        'The subject also authenticates the key and reads the project (both cached for 1 s) and takes a rate-limit unit (from its lease of the window, claimed ahead); the floor does neither. Both starts carry the summary and details the Temporal UI shows.',
      ],
    };
  },
};
