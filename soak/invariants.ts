// The soak's invariants as pure functions of (history, snapshot): each says whether it holds, how many things it
// checked, and the counterexamples that break it (docs/reliability.md lists them).
import type { FaultEntry, HistoryEntry, MemoryEntry, MetaEntry, OpEntry } from './lib/history';
import type { Snapshot } from './lib/snapshot';

export interface Verdict {
  name: string;
  holds: boolean;
  checked: number;
  counterexamples: string[];
}

/** An invariant that looked at nothing proves nothing: it fails, and says so (a run with no answers, events or webhooks). */
const verdict = (name: string, checked: number, counterexamples: string[]): Verdict => {
  const found = checked === 0 ? [...counterexamples, 'nothing to check: the run gave this invariant nothing to look at'] : counterexamples;
  return { name, holds: found.length === 0, checked, counterexamples: found };
};
const ops = (h: HistoryEntry[], name?: string) => h.filter((e): e is OpEntry => e.kind === 'op' && (name === undefined || e.op === name));
const groupBy = <T, K>(items: T[], key: (t: T) => K): Map<K, T[]> => {
  const m = new Map<K, T[]>();
  for (const t of items) m.set(key(t), [...(m.get(key(t)) ?? []), t]);
  return m;
};
const ended = new Set(['completed', 'failed', 'archived']);

/** The settings the run started with (the `start` meta line). */
export const runSettings = (h: HistoryEntry[]): Record<string, unknown> => h.find((e): e is MetaEntry => e.kind === 'meta' && e.what === 'start')?.settings ?? {};

/** Every job a create accepted, and every job the store holds, ended: completed, failed or archived. */
export function jobsEnded(h: HistoryEntry[], s: Snapshot): Verdict {
  const stored = new Map(s.jobs.map((j) => [j.id, j]));
  const accepted = new Set([
    ...ops(h, 'job.create')
      .filter((o) => o.ok && o.jobId)
      .map((o) => o.jobId!),
    ...stored.keys(),
  ]);
  const bad: string[] = [];
  for (const id of accepted) {
    const job = stored.get(id);
    if (!job) bad.push(`${id}: accepted (201) but not in the store`);
    else if (!ended.has(job.status)) bad.push(`${id}: still ${job.status} at turn ${job.turn}`);
  }
  return verdict('accepted jobs all ended', accepted.size, bad);
}

/** A job opens at most one pull request, from its one branch. */
export function onePullRequestPerJob(_h: HistoryEntry[], s: Snapshot): Verdict {
  const bad: string[] = [];
  for (const job of s.jobs) {
    const pulls = s.pulls.filter((p) => p.head === job.branch);
    if (pulls.length > 1) bad.push(`${job.id}: ${pulls.length} pull requests from ${job.branch} (#${pulls.map((p) => p.number).join(', #')})`);
    const branches = s.branches.filter((b) => b.name.includes(job.id));
    if (branches.length > 1) bad.push(`${job.id}: ${branches.length} branches (${branches.map((b) => b.name).join(', ')})`);
  }
  return verdict('each job at most one pull request and one branch', s.jobs.length, bad);
}

/** A job's turns are 1, 2, …, its latest turn: no gap, no repeat. */
export function turnsWithoutGaps(_h: HistoryEntry[], s: Snapshot): Verdict {
  const byJob = groupBy(s.turns, (t) => t.jobId);
  const bad: string[] = [];
  for (const job of s.jobs) {
    const numbers = (byJob.get(job.id) ?? []).map((t) => t.turn).sort((a, b) => a - b);
    const expected = Array.from({ length: job.turn }, (_, i) => i + 1);
    if (numbers.join(',') !== expected.join(',')) bad.push(`${job.id}: turns [${numbers.join(', ')}], job at turn ${job.turn}`);
  }
  return verdict('turns numbered without gaps', s.jobs.length, bad);
}

const contiguousFrom = (ids: number[], first: number) => ids.every((id, i) => id === first + i);

/**
 * A job's stored event ids are 1, 2, …, n; a reader that was cut and resumed with Last-Event-ID saw them once each, in
 * order, with nothing missing at the seam (the ids before the cut, then the ids after it, run on without a gap).
 */
export function eventIdsInOrder(h: HistoryEntry[], s: Snapshot): Verdict {
  const bad: string[] = [];
  const byJob = groupBy(s.events, (e) => e.jobId);
  for (const [jobId, events] of byJob) {
    const seqs = events.map((e) => e.seq).sort((a, b) => a - b);
    if (!contiguousFrom(seqs, 1)) bad.push(`${jobId}: stored event ids [${seqs.join(', ')}] are not 1…${seqs.length}`);
  }
  const reads = ops(h, 'events.resume').filter((o) => o.ok && o.jobId);
  for (const r of reads) {
    const before = (r.detail?.before as number[] | undefined) ?? [];
    const after = (r.detail?.after as number[] | undefined) ?? [];
    const seen = [...before, ...after];
    if (!contiguousFrom(seen, 1)) bad.push(`${r.jobId}: a reader resumed after ${before.at(-1) ?? 0} saw [${before.join(', ')}] then [${after.join(', ')}]`);
    const stored = new Set((byJob.get(r.jobId!) ?? []).map((e) => e.seq));
    const unknown = seen.filter((id) => !stored.has(id));
    if (unknown.length) bad.push(`${r.jobId}: a reader saw ids [${unknown.join(', ')}] the store does not hold`);
  }
  return verdict("each job's event ids strictly increasing, nothing missing for a resumed reader", byJob.size + reads.length, bad);
}

/** What tells one webhook message from another: its endpoint, event, job, turn, the job's status and plan revision in it. */
const messageKey = (r: Snapshot['received'][number]) =>
  `${r.type} of ${r.jobId ?? '?'} turn ${r.turn ?? '?'} (${r.jobStatus ?? '?'}${r.planRevision ? `, plan revision ${r.planRevision}` : ''}) to ${r.endpointId}`;

/**
 * Each stored webhook message reached every endpoint subscribed to it at least once, as the soak's receiver saw it (a
 * 2xx after it verified the signature; docent's own delivery log is not evidence), and every attempt of one message
 * carried one `webhook-id`. An attempt docent logged as delivered that the receiver never verified is a counterexample.
 */
export function webhooksDelivered(_h: HistoryEntry[], s: Snapshot): Verdict {
  const bad: string[] = [];
  let checked = 0;
  const okAt = new Set(s.received.filter((r) => r.verified && r.status < 300).map((r) => `${r.webhookId}|${r.endpointId}`));
  const claimed = new Set(s.webhookDeliveries.filter((d) => d.ok).map((d) => `${d.messageId}|${d.endpointId}`));
  for (const key of claimed) if (!okAt.has(key)) bad.push(`${key.replace('|', ' to ')}: docent logged it delivered, the receiver never verified it`);
  for (const m of s.webhookMessages) {
    for (const e of s.webhookEndpoints.filter((x) => x.projectId === m.projectId && x.events.includes(m.type))) {
      checked++;
      if (okAt.has(`${m.id}|${e.id}`)) continue;
      const attempts = s.webhookDeliveries.filter((d) => d.messageId === m.id && d.endpointId === e.id);
      bad.push(`${m.id} (${m.type}) never delivered to ${e.id}: ${attempts.length} attempt(s), statuses [${attempts.map((a) => a.status ?? 'none').join(', ')}]`);
    }
  }
  for (const [key, got] of groupBy(s.received, messageKey)) {
    const ids = [...new Set(got.map((r) => r.webhookId))];
    if (ids.length > 1) bad.push(`one message (${key}) arrived under ${ids.length} webhook-ids: ${ids.join(', ')}`);
  }
  const unverified = s.received.filter((r) => !r.verified);
  if (unverified.length) bad.push(`${unverified.length} delivery attempt(s) failed signature verification: ${[...new Set(unverified.map((r) => r.webhookId))].join(', ')}`);
  return verdict('each webhook message delivered at least once, all attempts one webhook-id', checked, bad);
}

/**
 * Each assistant answer the client read ended: completed, or an error the client may retry (a 429/503, or an error
 * frame). A stream that stopped sending without either is a silent stall. Answers the client cut on purpose are not
 * counted; the stored thread turns must all have a final status.
 */
export function answersEnded(h: HistoryEntry[], s: Snapshot): Verdict {
  const bad: string[] = [];
  const asks = ops(h, 'assistant.ask').filter((o) => o.detail?.outcome !== 'cut');
  for (const a of asks) {
    const outcome = a.detail?.outcome;
    if (outcome === 'completed') continue;
    if (outcome === 'error' && a.detail?.retryable === true) continue;
    bad.push(`${a.project ?? '?'} at ${new Date(a.start).toISOString()}: ${String(outcome)}${a.error ? ` (${a.error})` : ''}${a.status ? ` HTTP ${a.status}` : ''}`);
  }
  const final = new Set(['completed', 'failed', 'aborted']);
  for (const t of s.threads) for (const turn of t.turns) if (!final.has(turn.status)) bad.push(`thread ${t.id}: turn ${turn.messageId ?? '?'} stored as ${turn.status}`);
  return verdict('each assistant answer completed or ended with a retryable error', asks.length, bad);
}

/** Accepted job creates and follow-ups per project and UTC hour never exceed the run's DOCENT_LIMIT_JOBS_PER_HOUR. */
export function rateLimitsHeld(h: HistoryEntry[], _s: Snapshot): Verdict {
  const limit = Number(runSettings(h).jobsPerProjectHour);
  const accepted = [...ops(h, 'job.create'), ...ops(h, 'job.followup')].filter((o) => o.ok);
  const bad: string[] = [];
  if (!Number.isFinite(limit)) bad.push('the history names no jobsPerProjectHour limit');
  else {
    for (const [key, list] of groupBy(accepted, (o) => `${o.project}|${new Date(o.end).toISOString().slice(0, 13)}`)) {
      if (list.length > limit) bad.push(`${key}: ${list.length} accepted, limit ${limit}`);
    }
  }
  return verdict('rate-limit counts never above the limit', accepted.length, bad);
}

/** No clone, sandbox or setup-cache temporary left in the workers' folders after the drain. */
export function noTemporariesLeft(_h: HistoryEntry[], s: Snapshot): Verdict {
  return verdict(
    'no workspace, sandbox or setup-cache temporary left',
    // What was checked is every job's folders on both workers: the count says how many jobs could have left one.
    s.jobs.length,
    s.leftovers.map((p) => `left behind: ${p}`),
  );
}

/** The factor by which a process's resident memory at its last sample may exceed its first. */
export const memoryFactor = 3;

/** Memory samples by process: a member restarted by a fault is a new process, compared with itself only. */
const byProcess = (h: HistoryEntry[]) =>
  groupBy(
    h.filter((e): e is MemoryEntry => e.kind === 'memory'),
    (m) => `${m.name} (pid ${m.pid})`,
  );

/**
 * A restarted member's samples from before its restart was done are of a process still starting (a worker at 56 MB
 * before it had loaded anything): its baseline is its first sample after the fault that restarted it ended.
 */
function readySamples(list: MemoryEntry[], faults: FaultEntry[]): MemoryEntry[] {
  const first = list[0]!;
  const restart = faults.filter((f) => f.target === first.name && f.start <= first.at && first.at <= f.end).at(-1);
  return restart ? list.filter((m) => m.at > restart.end) : list;
}

/** Each gateway and worker process's memory at its last sample within `memoryFactor` of its first once it was up. */
export function memoryBounded(h: HistoryEntry[], _s: Snapshot): Verdict {
  const bad: string[] = [];
  const faults = h.filter((e): e is FaultEntry => e.kind === 'fault');
  let compared = 0;
  for (const [who, all] of byProcess(h)) {
    const list = readySamples(all, faults);
    if (list.length < 2) continue;
    compared++;
    const first = list[0]!;
    const last = list.at(-1)!;
    if (last.rssBytes > memoryFactor * first.rssBytes) bad.push(`${who}: ${mb(first.rssBytes)} at its first sample, ${mb(last.rssBytes)} at its last (over ${memoryFactor}x)`);
  }
  return verdict(`each gateway and worker process's memory at its last sample within ${memoryFactor}x of its first`, compared, bad);
}

/** The load's window: from `load-start` to `load-end` (the load generator's own end, in-flight operations done). */
export function loadWindow(h: HistoryEntry[]): { start: number; end: number } | undefined {
  const at = (what: MetaEntry['what']) => h.find((e): e is MetaEntry => e.kind === 'meta' && e.what === what)?.at;
  const [start, end] = [at('load-start'), at('load-end')];
  return start !== undefined && end !== undefined ? { start, end } : undefined;
}

/**
 * Every enabled fault kind struck at least once while the load ran, and every injection applied: a fault that never
 * happened, or happened after the load, tested nothing (Jepsen's rule: a checker fails when its fault never came).
 */
export function faultsStruck(h: HistoryEntry[], _s: Snapshot): Verdict {
  const kinds = (runSettings(h).kinds as string[] | undefined) ?? [];
  const faults = h.filter((e): e is FaultEntry => e.kind === 'fault');
  const window = loadWindow(h);
  const bad: string[] = [];
  if (!window) bad.push('the history has no load window (load-start and load-end)');
  for (const f of faults.filter((x) => !x.ok)) bad.push(`${f.fault} at ${new Date(f.start).toISOString()} did not apply: ${f.error ?? 'no error recorded'}`);
  const during = (f: FaultEntry) => window !== undefined && f.start >= window.start && f.start < window.end;
  for (const kind of kinds) {
    const ofKind = faults.filter((f) => f.fault === kind);
    if (ofKind.some((f) => f.ok && during(f))) continue;
    if (ofKind.length === 0) bad.push(`${kind}: enabled but never injected`);
    else if (ofKind.some((f) => f.ok)) bad.push(`${kind}: struck only outside the load (${ofKind.map((f) => new Date(f.start).toISOString()).join(', ')})`);
    else bad.push(`${kind}: every injection failed to apply`);
  }
  return verdict('every enabled fault kind struck while the load ran, every injection applied', kinds.length, bad);
}

const mb = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MB`;

export const invariants = [faultsStruck, jobsEnded, onePullRequestPerJob, turnsWithoutGaps, eventIdsInOrder, webhooksDelivered, answersEnded, rateLimitsHeld, noTemporariesLeft, memoryBounded];

/** Every invariant over one run. */
export const checkRun = (h: HistoryEntry[], s: Snapshot): Verdict[] => invariants.map((check) => check(h, s));

/** The counts a run's closing note gives: operations, faults by kind, jobs, pull requests, events, deliveries. */
export function runCounts(h: HistoryEntry[], s: Snapshot) {
  const count = (xs: string[]) => Object.fromEntries([...groupBy(xs, (x) => x)].map(([k, v]) => [k, v.length]).sort());
  const memory = [...byProcess(h)].map(([who, l]) => ({ process: who, first: mb(l[0]!.rssBytes), last: mb(l.at(-1)!.rssBytes), samples: l.length }));
  return {
    seed: h.find((e): e is MetaEntry => e.kind === 'meta' && e.what === 'seed')?.seed,
    operations: count(ops(h).map((o) => `${o.op}${o.ok ? '' : ' (failed)'}`)),
    faults: count(h.filter((e): e is FaultEntry => e.kind === 'fault').map((f) => `${f.fault}${f.ok ? '' : ' (failed)'}`)),
    jobs: count(s.jobs.map((j) => j.status)),
    jobErrors: count(s.jobs.flatMap((j) => (j.error ? [j.error] : []))),
    pulls: s.pulls.length,
    events: s.events.length,
    webhookMessages: s.webhookMessages.length,
    deliveryAttempts: s.webhookDeliveries.length,
    received: s.received.length,
    memory,
  };
}
