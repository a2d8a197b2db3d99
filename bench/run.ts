// `npm run bench [-- name ...]`: runs the benchmarks against the local stack, prints each figure next to its
// same-run floor and writes bench/results/latest.{md,json}. Figures are printed, never asserted: the exit code
// is 0 whatever they are (1 only for a bad name).
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../src/config';
import { assistantTtft } from './assistant-ttft';
import { docsIngestScale } from './docs-ingest-scale';
import { docsResync } from './docs-resync';
import { docsSearchLatency } from './docs-search-latency';
import { jobCreateLatency } from './job-create-latency';
import { jobCreateThroughput } from './job-create-throughput';
import { jobEventsWebhooks } from './job-events-webhooks';
import { mergedPrToJob } from './merged-pr-to-job';
import type { Benchmark } from './lib/bench';
import { chartFileName, scaleChartSvg } from './lib/charts';
import { machineFacts } from './lib/machine';
import { startModelProcess, type ModelProcess } from './lib/model';
import { dropEarlierBenchDatabases } from './lib/stack';
import { markdownNotes, markdownTable, type BenchResult } from './lib/report';
import { sandboxOverhead } from './sandbox-overhead';
import { searchScale } from './search-scale';
import { setupCache } from './setup-cache';
import { streams1000 } from './streams-1000';
import { streamThroughput } from './stream-throughput';
import { tenantFairness } from './tenant-fairness';
import { threadAppend } from './thread-append';
import { widgetTtft } from './widget-ttft';
import { workerScaling } from './worker-scaling';
import { workflowOverhead } from './workflow-overhead';

const all: Benchmark[] = [
  jobCreateLatency,
  jobCreateThroughput,
  workflowOverhead,
  docsSearchLatency,
  assistantTtft,
  widgetTtft,
  streamThroughput,
  threadAppend,
  sandboxOverhead,
  setupCache,
  jobEventsWebhooks,
  workerScaling,
  docsResync,
  docsIngestScale,
  mergedPrToJob,
  searchScale,
  streams1000,
  tenantFairness,
];
const resultsDir = path.resolve(__dirname, '../../bench/results');

async function main(names: string[]): Promise<number> {
  const unknown = names.filter((n) => !all.some((b) => b.name === n));
  if (unknown.length) {
    console.error(`unknown benchmark(s): ${unknown.join(', ')}\navailable:\n${all.map((b) => `  ${b.name.padEnd(24)} ${b.summary}`).join('\n')}`);
    return 1;
  }
  const chosen = names.length ? all.filter((b) => names.includes(b.name)) : all;
  const config = loadConfig(process.env);
  const facts = await machineFacts(config);
  console.log(
    Object.entries(facts)
      .map(([k, v]) => `${k}: ${v}`)
      .join('\n'),
  );

  const dropped = await dropEarlierBenchDatabases(config.mongo.url);
  if (dropped.length) console.log(`dropped ${dropped.length} database(s) of earlier runs`);

  let model: Promise<ModelProcess> | undefined;
  const results: BenchResult[] = [];
  const t0 = performance.now();
  try {
    for (const b of chosen) {
      console.log(`\n== ${b.name}: ${b.summary}`);
      const t = performance.now();
      try {
        const out = await b.run({ model: () => (model ??= startModelProcess()), log: (l) => console.log(`  ${l}`) });
        results.push({ name: b.name, rows: out.rows, notes: out.notes, charts: out.charts, seconds: (performance.now() - t) / 1000 });
      } catch (err) {
        console.error(err);
        results.push({ name: b.name, rows: [], notes: [], seconds: (performance.now() - t) / 1000, error: (err as Error).message ?? String(err) });
      }
      console.log(markdownTable([results.at(-1)!]));
    }
  } finally {
    await (await model?.catch(() => undefined))?.stop();
  }
  const total = (performance.now() - t0) / 1000;
  const base = names.length ? `partial-${names.join('+')}` : 'latest';
  const charts = results.flatMap((r) => (r.charts ?? []).map((chart) => ({ file: chartFileName(base, r.name, chart), chart })));

  const md = [
    `# docent benchmarks`,
    '',
    `\`npm run bench${names.length ? ` -- ${names.join(' ')}` : ''}\`: ${chosen.length} benchmark(s) in ${total.toFixed(0)} s. Each benchmark alternates floor and subject blocks in one process; ` +
      'the ratio column is the median over block pairs (read it first), absolute figures follow. Other work on this machine makes absolute figures noisy.',
    '',
    '## Machine',
    '',
    ...Object.entries(facts).map(([k, v]) => `- ${k}: ${v}`),
    '',
    '## Results',
    '',
    markdownTable(results),
    '',
    '## Notes',
    '',
    markdownNotes(results),
    '',
    ...(charts.length ? ['## Charts', '', ...charts.map((c) => `![${c.chart.title}](${c.file})`), ''] : []),
  ].join('\n');
  await mkdir(resultsDir, { recursive: true });
  await writeFile(path.join(resultsDir, `${base}.md`), md);
  for (const c of charts) await writeFile(path.join(resultsDir, c.file), scaleChartSvg(c.chart));
  await writeFile(path.join(resultsDir, `${base}.json`), JSON.stringify({ facts, totalSeconds: total, results }, null, 2) + '\n');
  console.log(`\n${md}\nwrote bench/results/${base}.md and .json (${total.toFixed(0)} s)`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(0); // benchmarks never fail a build
  },
);
