// widget-ttft: time from asking in the embedded widget (Debian's chromium) to the first answer text on screen, vs a
// direct stream client in the same page: fetch of the same v2 endpoint, read until its first text-delta frame.
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { chromium } from 'playwright-core';
import type { Benchmark } from './lib/bench';
import { alternate, closedLoop, p50s, pooled } from './lib/blocks';
import { startAssistantBench } from './lib/assistant';
import { scriptedQuestion } from './lib/model';
import type { Row } from './lib/report';
import { fmtMs, fmtRatio, median, medianDifference, medianRatio } from './lib/stats';

const firstMs = 300;
const rounds = 6;
const perBlock = 5;

// Page-side code is a string: the benchmark compiles without the DOM library.
const widgetAsk = (question: string) => `(async () => {
  const root = document.querySelector('docent-assistant').shadowRoot;
  root.querySelector('button[aria-label="Start a new conversation"]').click();
  const input = root.querySelector('textarea[name=question]');
  input.value = ${JSON.stringify(question)};
  const t0 = performance.now();
  const shown = new Promise((resolve) => {
    const seen = () => (root.querySelector('.msg.assistant .answer')?.textContent ?? '').length > 0;
    const observer = new MutationObserver(() => { if (seen()) { observer.disconnect(); resolve(performance.now() - t0); } });
    observer.observe(root, { subtree: true, childList: true, characterData: true });
  });
  input.closest('form').requestSubmit();
  const ms = await shown;
  await new Promise((resolve) => { const poll = () => root.querySelector('dialog').dataset.status === 'ready' ? resolve() : setTimeout(poll, 5); poll(); });
  return ms;
})()`;

const directAsk = (url: string, key: string, question: string) => `(async () => {
  const t0 = performance.now();
  const res = await fetch(${JSON.stringify(url)}, { method: 'POST', headers: { authorization: 'Bearer ${key}', 'content-type': 'application/json' },
    body: JSON.stringify({ fp: 'anonymous', messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: ${JSON.stringify(question)} }] }] }) });
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '', first;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffered += value;
    if (first === undefined && buffered.includes('"type":"text-delta"')) first = performance.now() - t0;
  }
  return first;
})()`;

/** What a docs page downloads: widget.js as the gateway sends it (built .gz and .br beside it, widget/vite.config.mts). */
async function sizeRow(dir: string): Promise<Row> {
  const kib = async (file: string) => (await stat(path.join(dir, file))).size / 1024;
  const [gz, br, raw] = await Promise.all([kib('widget.js.gz'), kib('widget.js.br'), kib('widget.js')]);
  return {
    bench: 'widget-ttft',
    case: 'widget.js size',
    ratio: `${gz.toFixed(1)} KiB gzip, ${br.toFixed(1)} KiB brotli`,
    target: '≤ 60 KiB gzipped',
    met: gz <= 60,
    subject: `${raw.toFixed(1)} KiB minified`,
    baseline: '—',
  };
}

export const widgetTtft: Benchmark = {
  name: 'widget-ttft',
  summary: `first answer text in the widget (chromium) vs a direct fetch stream client in the same page (model's first token after ${firstMs} ms)`,
  async run(ctx) {
    const a = await startAssistantBench(ctx);
    const site = Fastify({ forceCloseConnections: true });
    site.get('/', (_req, reply) =>
      reply.type('text/html').send(`<!doctype html><body><h1>Docs</h1><script src="${a.gw.url}/widget.js" data-domain="${a.domain}" data-key="${a.key}" defer></script></body>`),
    );
    await site.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(site.server.address() as AddressInfo).port}`;
    const { orgId } = await a.gw.deps.keys.authenticate(`Bearer ${a.key}`, 'assistant');
    await a.gw.deps.tenancy.createOrg(orgId).catch(() => undefined);
    await a.gw.deps.tenancy.createProject({ _id: `widget-${a.domain.split('.')[0]}`, orgId, repository: 'bench/docs', ref: 'main', domain: a.domain, allowedOrigins: [origin] });
    const profile = await mkdtemp(path.join(os.tmpdir(), 'docent-bench-chromium-'));
    const browser = await chromium.launchPersistentContext(profile, {
      executablePath: '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const rows: Row[] = [];
    try {
      const page = await browser.newPage();
      await page.goto(`${origin}/`);
      await page.locator('docent-assistant .launcher').click();
      const question = scriptedQuestion('how do I install from the lockfile', { tokens: 5, firstMs });
      const url = `${a.gw.url}/discovery/v2/assistant/${a.domain}/message`;
      const block = (script: string) => async () => {
        const samples: number[] = [];
        const b = await closedLoop(async () => samples.push((await page.evaluate(script)) as number), { concurrency: 1, ops: perBlock });
        return { ...b, latencies: samples };
      };
      const r = await alternate({ rounds, baseline: block(directAsk(url, a.key, question)), subject: block(widgetAsk(question)) });
      const overhead = medianDifference(p50s(r.subject), p50s(r.baseline));
      rows.push({
        bench: 'widget-ttft',
        case: 'chromium c=1',
        ratio: `p50 ${fmtRatio(medianRatio(p50s(r.subject), p50s(r.baseline)))}; overhead p50 ${fmtMs(overhead)}`,
        target: 'overhead ≤ 20 ms p50',
        met: overhead <= 20,
        subject: `p50 ${fmtMs(median(p50s(r.subject)))}, p99 ${fmtMs(pooled(r.subject, 99))}`,
        baseline: `p50 ${fmtMs(median(p50s(r.baseline)))}, p99 ${fmtMs(pooled(r.baseline, 99))}`,
      });
      ctx.log(`${rows[0]!.case}: ${rows[0]!.ratio}`);
      rows.push(await sizeRow(a.gw.deps.config.widgetDir));
    } finally {
      await browser.close();
      await rm(profile, { recursive: true, force: true });
      await site.close();
      await a.stop();
    }
    return {
      rows,
      notes: [
        `${rounds} pairs of blocks of ${perBlock} sequential questions after a warm-up pair, from a page of an allowed origin in headless chromium. ` +
          'The subject is the whole widget path: submit, the AI SDK transport, readUIMessageStream and the Markdown render, timed to the first answer text in the shadow DOM; ' +
          'the baseline is a bare fetch of the same endpoint from the same page, timed to the first text-delta frame it reads. Both start a new thread each time.',
      ],
    };
  },
};
