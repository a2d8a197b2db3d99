// setup-cache: a project's setup (`npm ci` of express 4, 72 packages, from the registry through the turn's egress
// proxy) with the worker's setup cache on vs off, each on a fresh clone and HOME as a job gets them. Needs bwrap,
// socat, tar, zstd and the registry, not the stack.
import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { runCachedSetup } from '../activities/agent-job/cached-setup';
import { prepareTurnSandbox } from '../activities/agent-job/sandbox-workspace';
import { SetupCache } from '../activities/agent-job/setup-cache';
import { hardenedGit } from '../src/git/access';
import type { SandboxConfig } from '../src/config';
import type { ProjectChecks } from '../workflows/agent-job-contract';
import type { Benchmark } from './lib/bench';
import { alternate, type Block } from './lib/blocks';
import type { Row } from './lib/report';
import { fmtMs, fmtRatio, median, medianRatio } from './lib/stats';
import { parseEgressAllowRule } from '../src/sandbox/egress/allow-rules';
import { labInternetAllow } from '../test/support/lab-internet';

const rounds = 5;
/** The cache is there to make a warm start cheap: a restore within a tenth of the setup it replaces (issue 23). */
const hitTarget = 0.1;
const fixture = path.resolve(__dirname, '../../test/fixtures/npm-setup-project');

export const setupCache: Benchmark = {
  name: 'setup-cache',
  summary: 'a job’s `npm ci` setup with the setup cache on (hit; miss + store) vs off',
  async run(ctx) {
    const root = await mkdtemp(path.join(os.tmpdir(), 'docent-bench-setup-cache-'));
    const config: SandboxConfig = {
      bwrapPath: 'bwrap',
      runAs: { uid: 61000, gid: 61000 },
      readOnlyPaths: [],
      // The lab's relay to the registry, when its resolver answers with a documentation address.
      egressAllow: (await labInternetAllow()).map(parseEgressAllowRule),
      cgroup: 'off',
      limits: { timeoutMs: 300_000, memoryBytes: 2 ** 31, maxProcesses: 256, maxFileBytes: 2 ** 28, maxDiskBytes: 2 ** 30, tmpBytes: 2 ** 28, maxInodes: 200_000 },
    };
    try {
      // The sandbox's uid resolves bind sources by path: every parent must be searchable by it.
      await chmod(root, 0o711);
      const origin = path.join(root, 'origin');
      await mkdir(origin);
      for (const f of ['package.json', 'package-lock.json']) await copyFile(path.join(fixture, f), path.join(origin, f));
      const run = promisify(execFile);
      const git = (...args: string[]) => run('git', ['-c', 'user.email=bench@example.org', '-c', 'user.name=bench', ...args], { cwd: origin });
      await git('init', '--quiet');
      await git('add', '.');
      await git('commit', '--quiet', '-m', 'fixture');
      const commit = (await git('rev-parse', 'HEAD')).stdout.trim();
      const cache = new SetupCache({ dir: path.join(root, 'cache'), maxBytes: 2 ** 32 });
      let jobs = 0;
      let generation = 0;
      /** What the hit entries say: checking and unpacking the archives, without the key. */
      const restoreMs: number[] = [];

      /** One job's setup on a fresh clone and HOME; the clone and sandbox are made before the clock starts. */
      const setupBlock = async (cached: boolean, fresh = false): Promise<Block> => {
        jobs += 1;
        const clone = path.join(root, `job${jobs}`);
        const home = `${clone}.home`;
        await run('git', ['clone', '--quiet', origin, clone]);
        const checks: ProjectChecks = {
          setup: ['npm ci --no-audit --no-fund'],
          check: [],
          network: true,
          allowHosts: ['registry.npmjs.org'],
          // A new generation is a key no worker holds: the miss case.
          setupCache: { project: 'bench', keyFiles: ['package-lock.json'], generation: fresh ? ++generation : generation, maintenance: [] },
        };
        const sandbox = await prepareTurnSandbox(config, clone, home, { network: true, allowHosts: checks.allowHosts });
        try {
          const t = performance.now();
          const { results } = await runCachedSetup({
            ...(cached ? { cache } : {}),
            checks,
            git: hardenedGit(clone, root),
            commit,
            root: clone,
            home,
            sandbox,
            run: (command) => sandbox.run(command, { tailBytes: 2000 }),
            withSecrets: false,
            ownerCode: true,
            readOnlyPaths: [],
          });
          const ms = performance.now() - t;
          if (results.some((r) => r.exitCode !== 0)) throw new Error(`setup failed: ${results.map((r) => r.output).join('\n')}`);
          if (results[0]?.cache === 'hit') restoreMs.push(results[0].durationMs);
          return { latencies: [ms], ops: 1, errors: 0, seconds: ms / 1000 };
        } finally {
          // The clones stay until the end: deleting a thousand files is the disk's work during the next block, not setup's.
          await sandbox.close();
        }
      };

      const rows: Row[] = [];
      const hits = await alternate({ rounds, baseline: () => setupBlock(false), subject: () => setupBlock(true) });
      const hitRatio = medianRatio(
        hits.subject.map((b) => b.latencies[0]!),
        hits.baseline.map((b) => b.latencies[0]!),
      );
      rows.push({
        bench: 'setup-cache',
        case: '`npm ci` (express 4, 72 packages), cache hit vs off',
        ratio: fmtRatio(hitRatio),
        target: `≤ ${hitTarget}×`,
        met: hitRatio <= hitTarget,
        subject: `median ${fmtMs(median(hits.subject.map((b) => b.latencies[0]!)))} (of which checking and unpacking the archives ${fmtMs(median(restoreMs))})`,
        baseline: `median ${fmtMs(median(hits.baseline.map((b) => b.latencies[0]!)))} (npm ci)`,
      });
      ctx.log(`${rows[0]!.case}: ${rows[0]!.ratio}`);

      const misses = await alternate({ rounds, warmup: false, baseline: () => setupBlock(false), subject: () => setupBlock(true, true) });
      const missRatio = medianRatio(
        misses.subject.map((b) => b.latencies[0]!),
        misses.baseline.map((b) => b.latencies[0]!),
      );
      rows.push({
        bench: 'setup-cache',
        case: '`npm ci`, cache miss (run, then archive and store) vs off',
        ratio: fmtRatio(missRatio),
        target: 'reported, no target',
        met: null,
        subject: `median ${fmtMs(median(misses.subject.map((b) => b.latencies[0]!)))}`,
        baseline: `median ${fmtMs(median(misses.baseline.map((b) => b.latencies[0]!)))}`,
      });
      ctx.log(`${rows[1]!.case}: ${rows[1]!.ratio}`);
      return {
        rows,
        notes: [
          `${rounds} pairs after a warm-up pair (whose cache-on side is the miss that stores the entry). Each side is one job's setup on a fresh clone and ` +
            'sandbox HOME, timed around runCachedSetup: off runs `npm ci` in the sandbox with network on (egress proxy per turn, as the worker does); a hit ' +
            'computes the key (git blob ids, the sandbox image hash), lists both archives, copies them into HOME and unpacks them in the sandbox. ' +
            'A miss is `npm ci` plus archiving the clone’s ignored files and HOME (tar + zstd) and checking the archives before the entry is kept.',
        ],
      };
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  },
};
