// The soak's fault loop: at seeded random times, one fault of an enabled kind, each recorded with its start and end.
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Receivers } from './doubles';
import type { Member } from './fleet';
import type { HistoryEntry } from './history';
import type { PrivateStack } from './private-stack';
import type { Rng } from './prng';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const faultKinds = ['kill-worker', 'kill-gateway', 'restart-temporal', 'restart-ferretdb', 'restart-elasticsearch', 'pause', 'cut-receiver', 'fill-disk'] as const;
export type FaultKind = (typeof faultKinds)[number];

export interface FaultContext {
  rng: Rng;
  record: (e: HistoryEntry) => void;
  gateways: Member[];
  workers: Member[];
  stack: PrivateStack;
  receivers: Receivers;
  /** Each worker's size-limited workspace folder. */
  workspaces: string[];
  /** How long a paused process stays stopped: past the agent heartbeat timeout. */
  pauseMs: number;
}

async function inject(ctx: FaultContext, kind: FaultKind): Promise<string> {
  switch (kind) {
    case 'kill-worker':
    case 'kill-gateway': {
      const m = ctx.rng.pick(kind === 'kill-worker' ? ctx.workers : ctx.gateways);
      await m.signal('SIGKILL');
      await sleep(ctx.rng.int(500, 5000));
      await m.start();
      return m.name;
    }
    case 'restart-temporal':
    case 'restart-ferretdb':
    case 'restart-elasticsearch': {
      const part = kind.slice('restart-'.length) as 'temporal' | 'ferretdb' | 'elasticsearch';
      await ctx.stack.restart(part);
      return part;
    }
    case 'pause': {
      const m = ctx.rng.pick([...ctx.workers, ...ctx.gateways]);
      await m.signal('SIGSTOP');
      await sleep(ctx.pauseMs);
      await m.signal('SIGCONT');
      return m.name;
    }
    case 'cut-receiver': {
      ctx.receivers.cut(true);
      await sleep(ctx.rng.int(5000, 30_000));
      ctx.receivers.cut(false);
      return 'receivers';
    }
    case 'fill-disk': {
      const i = ctx.rng.int(0, ctx.workspaces.length);
      const filler = path.join(ctx.workspaces[i]!, '.soak-filler');
      // dd stops at ENOSPC with a non-zero exit: the disk is full, which is the point.
      await run('dd', ['if=/dev/zero', `of=${filler}`, 'bs=1M']).catch(() => undefined);
      await sleep(ctx.rng.int(5000, 20_000));
      await rm(filler, { force: true });
      return `worker-${i} workspace`;
    }
  }
}

/**
 * Injects `count` faults of the enabled kinds at random times spread over [now, until), one at a time; every kind at
 * least once. `onEveryKindTried` is called once each kind's first injection has ended: the load keeps running until
 * then, so no kind's turn comes after the load (soak/invariants.ts, faultsStruck, fails a run where one did).
 */
export async function runFaults(ctx: FaultContext, kinds: FaultKind[], count: number, until: number, onEveryKindTried: () => void = () => undefined): Promise<void> {
  const times = Array.from({ length: count }, () => ctx.rng.next()).sort((a, b) => a - b);
  const order = [...kinds].sort(() => ctx.rng.next() - 0.5);
  const from = Date.now();
  const span = until - from;
  if (order.length === 0) onEveryKindTried();
  for (const [n, at] of times.entries()) {
    const wait = from + at * span - Date.now();
    if (wait > 0) await sleep(wait);
    // Past `until` only to give every enabled kind its one turn (a slow restart can push the rest late).
    if (Date.now() >= until && n >= order.length) break;
    // Every kind comes round at least once before any repeats, in a seeded order.
    const kind = n < order.length ? order[n]! : ctx.rng.pick(kinds);
    const start = Date.now();
    try {
      const target = await inject(ctx, kind);
      ctx.record({ kind: 'fault', fault: kind, target, start, end: Date.now(), ok: true });
    } catch (err) {
      ctx.record({ kind: 'fault', fault: kind, target: '?', start, end: Date.now(), ok: false, error: (err as Error).message.slice(0, 300) });
    }
    if (n === order.length - 1) onEveryKindTried();
  }
  // Fewer faults than kinds (--fault-count below the kinds' number): the kinds left out are the verdict's to report.
  if (times.length < order.length) onEveryKindTried();
}
