// The soak's load: for each project, job creates (some awaiting plan approval, then approved), follow-ups, stops,
// pull-request comments, assistant answers (read to the end, or cut), event streams cut and resumed with
// Last-Event-ID, docs ingests and receivers that fail and recover. Each operation ends as one history line.
import path from 'node:path';
import { runDocsIngest } from '../../src/cli/docs-ingest';
import type { Config } from '../../src/config';
import type { GitHubConversation } from '../../test/support/github-double-conversation';
import type { GitHubDouble } from '../../test/support/github-double';
import { deliver, issueCommentCreated, signedDelivery } from '../../test/support/github-webhooks';
import { repositoryRoot } from '../../test/support/process';
import { parseSse } from '../../test/support/sse';
import type { Receivers } from './doubles';
import type { HistoryEntry, OpEntry } from './history';
import type { Rng } from './prng';

export interface SoakProject {
  id: string;
  owner: string;
  repo: string;
  domain: string;
  adminKey: string;
  assistantKey: string;
  /** The project's own GitHub webhook secret (token mode). */
  githubSecret: string;
}

export interface LoadContext {
  rng: Rng;
  record: (e: HistoryEntry) => void;
  /** Base URLs of the gateways that are up now. */
  gateways: () => string[];
  projects: SoakProject[];
  github: GitHubDouble;
  conversation: GitHubConversation;
  receivers: Receivers;
  /** A config reaching the private stack, for the docs ingest client. */
  config: Config;
  /** Jobs accepted so far, by project. */
  jobs: Map<string, string[]>;
}

const docsFolder = path.join(repositoryRoot, 'test/fixtures/docs/mini');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let counter = 0;

/** Runs one operation, timing it and recording what it returned or threw. */
async function timed(ctx: LoadContext, op: string, project: SoakProject, run: () => Promise<Partial<OpEntry>>): Promise<Partial<OpEntry>> {
  const start = Date.now();
  let out: Partial<OpEntry>;
  try {
    out = await run();
  } catch (err) {
    out = { ok: false, error: (err as Error).message.slice(0, 300) };
  }
  ctx.record({ kind: 'op', op, start, end: Date.now(), project: project.id, ok: false, ...out });
  return out;
}

function gatewayOf(ctx: LoadContext): string {
  const up = ctx.gateways();
  if (up.length === 0) throw new Error('no gateway up');
  return ctx.rng.pick(up);
}

async function call(ctx: LoadContext, key: string, method: string, p: string, body?: unknown) {
  const res = await fetch(gatewayOf(ctx) + p, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  let json: any = {};
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, json, error: res.ok ? undefined : `${json.code ?? ''} ${json.error ?? text}`.trim().slice(0, 200) };
}

async function createJob(ctx: LoadContext, p: SoakProject) {
  const plan = ctx.rng.chance(0.2);
  const slow = ctx.rng.chance(0.3) ? ` [slow=${ctx.rng.int(2000, 8000)}]` : '';
  const prompt = `write note n${++counter}${slow}`;
  const r = await timed(ctx, 'job.create', p, async () => {
    const res = await call(ctx, p.adminKey, 'POST', `/v2/agent/${p.id}/job`, { prompt, ...(plan ? { requirePlanApproval: true } : {}) });
    return { ok: res.status === 201, status: res.status, jobId: res.json.id, error: res.error, detail: { requirePlanApproval: plan } };
  });
  if (r.ok && r.jobId) {
    ctx.jobs.set(p.id, [...(ctx.jobs.get(p.id) ?? []), r.jobId]);
    if (plan) void approveWhenPlanned(ctx, p, r.jobId);
  }
}

/** Waits for the plan, then approves the revision read, as a person would. */
async function approveWhenPlanned(ctx: LoadContext, p: SoakProject, jobId: string) {
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    await sleep(2000);
    const job = await call(ctx, p.adminKey, 'GET', `/v2/agent/${p.id}/job/${jobId}`).catch(() => undefined);
    if (job?.status !== 200) continue;
    if (job.json.status !== 'active') return;
    if (!job.json.awaitingApproval) continue;
    await timed(ctx, 'job.approve', p, async () => {
      const res = await call(ctx, p.adminKey, 'POST', `/v2/agent/${p.id}/job/${jobId}/approve`, { revision: job.json.planRevision });
      return { ok: res.status === 200, status: res.status, jobId, error: res.error };
    });
    return;
  }
}

const someJob = (ctx: LoadContext, p: SoakProject) => {
  const list = ctx.jobs.get(p.id) ?? [];
  return list.length ? ctx.rng.pick(list) : undefined;
};

async function followUp(ctx: LoadContext, p: SoakProject) {
  const jobId = someJob(ctx, p);
  if (!jobId) return;
  await timed(ctx, 'job.followup', p, async () => {
    const res = await call(ctx, p.adminKey, 'POST', `/v2/agent/${p.id}/job/${jobId}/message`, { prompt: `write note f${++counter}` });
    return { ok: res.status >= 200 && res.status < 300, status: res.status, jobId, error: res.error };
  });
}

async function stopJob(ctx: LoadContext, p: SoakProject) {
  const jobId = someJob(ctx, p);
  if (!jobId) return;
  await timed(ctx, 'job.stop', p, async () => {
    const res = await call(ctx, p.adminKey, 'POST', `/v2/agent/${p.id}/job/${jobId}/stop`);
    return { ok: res.status === 200 || res.status === 202, status: res.status, jobId, error: res.error };
  });
}

/** A member's mention on one of the project's pull requests, signed as GitHub signs it; sometimes sent twice (GitHub redelivers). */
async function prComment(ctx: LoadContext, p: SoakProject) {
  const pulls = ctx.github.pulls.filter((x) => x.html_url.includes(`/${p.owner}/${p.repo}/`));
  if (!pulls.length) return;
  const pr = ctx.rng.pick(pulls);
  const comment = ctx.conversation.comment({ kind: 'issue', pull: pr.number, body: `@docent write note c${++counter}`, login: 'octo-member', association: 'MEMBER' });
  const delivery = await signedDelivery(p.githubSecret, 'issue_comment', issueCommentCreated(p.owner, p.repo, pr, comment));
  const times = ctx.rng.chance(0.2) ? 2 : 1;
  for (let i = 0; i < times; i++) {
    await timed(ctx, 'github.comment', p, async () => {
      const res = await deliver(gatewayOf(ctx), delivery);
      const body = (await res.json().catch(() => ({}))) as any;
      return { ok: res.status === 200, status: res.status, jobId: body.jobId, detail: { delivery: delivery.id, outcome: body.outcome, pull: pr.number, redelivery: i > 0 } };
    });
  }
}

/** fetch's "fetch failed" with the socket's own reason (ECONNRESET, "other side closed", …). */
function transportError(err: Error): string {
  const cause = err.cause as { code?: string; message?: string } | undefined;
  return cause ? `${err.message}: ${cause.code ?? cause.message}` : err.message;
}

/** An assistant answer read frame by frame: to its end, or cut after a few frames; 30 s without a frame is a stall. */
async function ask(ctx: LoadContext, p: SoakProject) {
  const cutAfter = ctx.rng.chance(0.25) ? ctx.rng.int(2, 8) : Infinity;
  await timed(ctx, 'assistant.ask', p, async () => {
    const aborter = new AbortController();
    const res = await fetch(`${gatewayOf(ctx)}/discovery/v2/assistant/${p.domain}/message`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.assistantKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ fp: 'soak', messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'how do I start?' }] }] }),
      signal: aborter.signal,
    }).catch((err: Error) => err);
    // The connection itself failed (a killed or paused gateway): the client is told at once and may ask again.
    if (res instanceof Error) return { ok: false, error: transportError(res), detail: { outcome: 'error', retryable: true, transport: true } };
    if (!res.ok || !res.body) return { ok: false, status: res.status, detail: { outcome: 'error', retryable: res.status === 429 || res.status >= 500 } };
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let raw = '';
    let frames = 0;
    for (;;) {
      let stall: NodeJS.Timeout | undefined;
      const next = await Promise.race([reader.read(), new Promise<'stall'>((r) => (stall = setTimeout(() => r('stall'), 30_000)))]).catch((err: Error) => err);
      clearTimeout(stall);
      if (next === 'stall') {
        aborter.abort();
        return { ok: false, status: res.status, error: 'no frame for 30 s', detail: { outcome: 'stalled', frames } };
      }
      if (next instanceof Error) return { ok: false, status: res.status, error: next.message, detail: { outcome: 'error', retryable: true, frames } };
      if (next.done) break;
      raw += next.value;
      const chunks = parseSse(raw.slice(0, raw.lastIndexOf('\n\n') + 2)).map((e) => e.data);
      frames = chunks.length;
      if (chunks.some((d) => d.includes('"type":"error"'))) return { ok: false, status: res.status, detail: { outcome: 'error', retryable: true, frames } };
      if (frames >= cutAfter) {
        aborter.abort();
        return { ok: true, status: res.status, detail: { outcome: 'cut', frames } };
      }
    }
    const done = raw.includes('"type":"finish"');
    return { ok: done, status: res.status, detail: { outcome: done ? 'completed' : 'ended-without-finish', frames } };
  });
}

/** Reads ids from a job's event stream until `stopAfter` events, the server's end, or `ms`. */
async function readIds(url: string, key: string, lastEventId: number | undefined, stopAfter: number, ms: number) {
  const aborter = new AbortController();
  const timer = setTimeout(() => aborter.abort(), ms);
  const ids: number[] = [];
  let ended = false;
  try {
    const res = await fetch(url, {
      headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', ...(lastEventId !== undefined ? { 'last-event-id': String(lastEventId) } : {}) },
      signal: aborter.signal,
    });
    if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
    let raw = '';
    for await (const chunk of res.body.pipeThrough(new TextDecoderStream())) {
      raw += chunk;
      const cut = raw.lastIndexOf('\n\n') + 2;
      for (const e of parseSse(raw.slice(0, cut))) if (e.id !== undefined && e.id !== '') ids.push(Number(e.id));
      raw = raw.slice(cut);
      if (ids.length >= stopAfter) {
        aborter.abort();
        return { ids, ended };
      }
    }
    ended = true;
  } catch (err) {
    if (!aborter.signal.aborted) throw err;
  } finally {
    clearTimeout(timer);
  }
  return { ids, ended };
}

/** A reader cut after a few events resumes with Last-Event-ID (from either gateway): it must see every id once, in order. */
async function resumeEvents(ctx: LoadContext, p: SoakProject) {
  const jobId = someJob(ctx, p);
  if (!jobId) return;
  const p1 = `/v2/agent/${p.id}/job/${jobId}/events`;
  await timed(ctx, 'events.resume', p, async () => {
    const first = await readIds(gatewayOf(ctx) + p1, p.adminKey, undefined, ctx.rng.int(1, 4), 30_000);
    const after = await readIds(gatewayOf(ctx) + p1, p.adminKey, first.ids.at(-1) ?? 0, Infinity, 60_000);
    return { ok: true, jobId, detail: { before: first.ids, after: after.ids, ended: after.ended } };
  });
}

async function ingest(ctx: LoadContext, p: SoakProject) {
  await timed(ctx, 'docs.ingest', p, async () => {
    await runDocsIngest(ctx.config, { domain: p.domain, source: docsFolder, baseUrl: `https://${p.domain}` }, () => undefined);
    return { ok: true };
  });
}

/** The project's receiver fails for a while, then recovers: deliveries in between must be retried with their id. */
async function flapReceiver(ctx: LoadContext, p: SoakProject) {
  const ms = ctx.rng.int(5000, 20_000);
  await timed(ctx, 'webhook.flap', p, async () => {
    ctx.receivers.fail(p.id, true);
    await sleep(ms);
    ctx.receivers.fail(p.id, false);
    return { ok: true, detail: { ms } };
  });
}

const mix: Array<[number, (ctx: LoadContext, p: SoakProject) => Promise<void>]> = [
  [30, createJob],
  [10, followUp],
  [5, stopJob],
  [10, prComment],
  [20, ask],
  [12, resumeEvents],
  [3, ingest],
  [4, flapReceiver],
];

/** One operation, chosen by weight, for a random project. */
export function nextOperation(ctx: LoadContext): Promise<void> {
  const total = mix.reduce((s, [w]) => s + w, 0);
  let roll = ctx.rng.next() * total;
  const p = ctx.rng.pick(ctx.projects);
  for (const [w, op] of mix) {
    roll -= w;
    if (roll < 0) return op(ctx, p);
  }
  return createJob(ctx, p);
}

/** Keeps up to `inFlight` operations running, starting one every `everyMs`, while `keepGoing()`; then waits for them. */
export async function runLoad(ctx: LoadContext, keepGoing: () => boolean, opts: { everyMs: number; inFlight: number }): Promise<void> {
  const running = new Set<Promise<void>>();
  while (keepGoing()) {
    if (running.size < opts.inFlight) {
      const op = nextOperation(ctx).catch(() => undefined);
      running.add(op);
      void op.finally(() => running.delete(op));
    }
    await sleep(opts.everyMs);
  }
  await Promise.all(running);
}
