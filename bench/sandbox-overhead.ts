// sandbox-overhead: `true` run through runInSandbox (bwrap, namespaces, mounts, prlimit, setpriv as root) vs a plain
// spawn of `true`; and the same with network on (egress proxy socket bound in, socat relay started and waited for)
// vs network off. Needs bwrap and socat only, not the stack.
import { spawn } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runInSandbox, type SandboxSpec } from '../src/sandbox';
import { startTurnEgress } from '../src/sandbox/egress';
import type { Benchmark } from './lib/bench';
import { alternate, closedLoop, p50s, p99s, pooled } from './lib/blocks';
import type { Row } from './lib/report';
import { fmtMs, fmtRatio, median, medianDifference, medianRatio } from './lib/stats';

const rounds = 7;
const opsPerBlock = 30;
const budgetMs = 15;
/** What network on may add to a command that does not use the network (issue 20). */
const networkBudgetMs = 25;
/** The uid the tests and the worker use when running as root (RLIMIT_NPROC does not bind uid 0). */
const benchUid = 61000;

function plainTrue(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('true', [], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: '/usr/bin:/bin' } });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`true exited ${code}`))));
  });
}

export const sandboxOverhead: Benchmark = {
  name: 'sandbox-overhead',
  summary: 'runInSandbox(`true`) vs a plain spawn of `true`; network on vs off',
  async run(ctx) {
    const root = await mkdtemp(path.join(os.tmpdir(), 'docent-bench-sandbox-'));
    const runAs = process.getuid?.() === 0 ? { uid: benchUid, gid: benchUid } : undefined;
    try {
      // bwrap resolves bind sources as the runAs uid: the parent must be searchable by it.
      await chmod(root, 0o711);
      const spec: SandboxSpec = {
        workspace: path.join(root, 'workspace'),
        home: path.join(root, 'home'),
        network: false,
        runAs,
        limits: { timeoutMs: 30_000, memoryBytes: 2 ** 30, maxProcesses: 256, maxFileBytes: 2 ** 28, maxDiskBytes: 2 ** 30, tmpBytes: 2 ** 28 },
      };
      for (const d of [spec.workspace, spec.home]) {
        await mkdir(d);
        if (runAs) await chown(d, runAs.uid, runAs.gid);
      }
      const sandboxedIn = (s: SandboxSpec) => async () => {
        const r = await runInSandbox(s, 'true');
        if (r.exitCode !== 0 || r.output !== '') throw new Error(`sandboxed true exited ${r.exitCode}: ${r.output}`);
      };
      const sandboxed = sandboxedIn(spec);
      const r = await alternate({
        rounds,
        baseline: () => closedLoop(plainTrue, { concurrency: 1, ops: opsPerBlock }),
        subject: () => closedLoop(sandboxed, { concurrency: 1, ops: opsPerBlock }),
      });
      const added = medianDifference(p50s(r.subject), p50s(r.baseline));
      const rows: Row[] = [
        {
          bench: 'sandbox-overhead',
          case: `\`true\`, c=1${runAs ? ', runAs (setpriv)' : ''}`,
          ratio: `added p50 ${fmtMs(added)}; p50 ${fmtRatio(medianRatio(p50s(r.subject), p50s(r.baseline)))}, p99 ${fmtRatio(medianRatio(p99s(r.subject), p99s(r.baseline)))}`,
          target: `added p50 ≤ ${budgetMs} ms`,
          met: added <= budgetMs,
          subject: `p50 ${fmtMs(median(p50s(r.subject)))}, p99 ${fmtMs(pooled(r.subject, 99))}`,
          baseline: `p50 ${fmtMs(median(p50s(r.baseline)))}, p99 ${fmtMs(pooled(r.baseline, 99))}`,
        },
      ];
      ctx.log(`${rows[0]!.case}: ${rows[0]!.ratio}`);

      const egress = await startTurnEgress({ operatorAllow: [], allowHosts: [], owner: runAs });
      try {
        const withNetwork = sandboxedIn({ ...spec, network: true, egressSocket: egress.socketPath });
        const n = await alternate({
          rounds,
          baseline: () => closedLoop(sandboxed, { concurrency: 1, ops: opsPerBlock }),
          subject: () => closedLoop(withNetwork, { concurrency: 1, ops: opsPerBlock }),
        });
        const addedByNetwork = medianDifference(p50s(n.subject), p50s(n.baseline));
        rows.push({
          bench: 'sandbox-overhead',
          case: `\`true\`, network on vs off, c=1`,
          ratio: `added p50 ${fmtMs(addedByNetwork)}; p50 ${fmtRatio(medianRatio(p50s(n.subject), p50s(n.baseline)))}, p99 ${fmtRatio(medianRatio(p99s(n.subject), p99s(n.baseline)))}`,
          target: `added p50 ≤ ${networkBudgetMs} ms`,
          met: addedByNetwork <= networkBudgetMs,
          subject: `p50 ${fmtMs(median(p50s(n.subject)))}, p99 ${fmtMs(pooled(n.subject, 99))}`,
          baseline: `p50 ${fmtMs(median(p50s(n.baseline)))}, p99 ${fmtMs(pooled(n.baseline, 99))}`,
        });
        ctx.log(`${rows[1]!.case}: ${rows[1]!.ratio}`);
      } finally {
        await egress.close();
      }
      return {
        rows,
        notes: [
          `${rounds} pairs of blocks of ${opsPerBlock} sequential runs after a warm-up pair. The subject is the whole runInSandbox call: ` +
            'opening the bind directories, one statfs, spawning bwrap (through setpriv when root) with fresh user, PID, mount, network, IPC and UTS namespaces, ' +
            'the mounts, a wrapper shell, prlimit and `/bin/sh -c true`, and waiting for the namespace to be torn down. The floor spawns `true` directly.',
          "Network on vs off: the same command with the turn's egress proxy socket bound in, socat started on 127.0.0.1:3128 and waited for " +
            '(shell builtins reading /proc/net/tcp) before `true` runs; the proxy itself is started once per turn, outside the timed loop, as the worker does.',
        ],
      };
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  },
};
