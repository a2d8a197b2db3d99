// cgroup v2 limits for sandboxed commands: memory, CPU and process count for the whole sandbox, not per process.
import { randomUUID } from 'node:crypto';
import { access, constants, mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

export const NEEDED_CONTROLLERS = ['memory', 'pids', 'cpu'] as const;
const CPU_PERIOD_US = 100_000;

export interface CgroupLimits {
  memoryBytes: number;
  maxProcesses: number;
  cpus?: number;
}

/** The cgroup v2 path of this process, from /proc/self/cgroup's `0::` line; undefined on a v1-only host. */
export function unifiedPathOf(procSelfCgroup: string): string | undefined {
  return /^0::(\/.*)$/m.exec(procSelfCgroup)?.[1];
}

/** Where the cgroup2 hierarchy is mounted, from /proc/self/mountinfo (`… - cgroup2 …`). */
export function cgroup2MountOf(mountinfo: string): string | undefined {
  for (const line of mountinfo.split('\n')) {
    const [before, after] = line.split(' - ');
    if (after?.startsWith('cgroup2 ')) return before!.split(' ')[4];
  }
  return undefined;
}

const missingIn = (controllers: string) => NEEDED_CONTROLLERS.filter((c) => !controllers.split(/\s+/).includes(c));

export type CgroupSetup = { dir: string; message: string } | { dir?: undefined; message: string };

const WHY_NOT = 'sandboxed commands run with per-process rlimits only (RLIMIT_DATA, RLIMIT_NPROC), no memory, CPU or pids cgroup';
const FIX =
  'run the worker with cgroup v2 and the memory, pids and cpu controllers delegated (systemd: Delegate=yes; Docker: a cgroup v2 host), or set DOCENT_SANDBOX_CGROUP to a delegated cgroup directory';

/**
 * Finds a cgroup v2 directory whose children get memory, pids and cpu: DOCENT_SANDBOX_CGROUP's, or (auto) this
 * process's own, after moving the worker into a leaf `docent-worker` beside them (cgroup v2 lets only leaves hold processes).
 */
export async function setUpCgroup(setting: string, proc = { cgroup: '/proc/self/cgroup', mountinfo: '/proc/self/mountinfo' }): Promise<CgroupSetup> {
  if (setting === 'off') return { message: `cgroup limits off (DOCENT_SANDBOX_CGROUP=off): ${WHY_NOT}` };
  try {
    let dir = setting;
    if (setting === 'auto') {
      const rel = unifiedPathOf(await readFile(proc.cgroup, 'utf8'));
      const mount = cgroup2MountOf(await readFile(proc.mountinfo, 'utf8'));
      if (rel === undefined || mount === undefined) return { message: `no cgroup v2 hierarchy: ${WHY_NOT}. Fix: ${FIX}` };
      dir = path.resolve(mount, `.${rel}`);
    }
    const available = await readFile(path.join(dir, 'cgroup.controllers'), 'utf8');
    const missing = missingIn(available);
    if (missing.length) return { message: `cgroup v2 at ${dir} does not delegate ${missing.join(', ')} (it has: ${available.trim() || 'none'}): ${WHY_NOT}. Fix: ${FIX}` };
    if (missingIn(await readFile(path.join(dir, 'cgroup.subtree_control'), 'utf8')).length) {
      if (setting === 'auto') {
        await mkdir(path.join(dir, 'docent-worker'), { recursive: true });
        await writeFile(path.join(dir, 'docent-worker', 'cgroup.procs'), String(process.pid));
      }
      await writeFile(path.join(dir, 'cgroup.subtree_control'), NEEDED_CONTROLLERS.map((c) => `+${c}`).join(' '));
    }
    await access(dir, constants.W_OK);
    return { dir, message: `sandboxed commands run in cgroup v2 children of ${dir} (memory.max, cpu.max, pids.max)` };
  } catch (err) {
    return { message: `cannot use cgroup v2 (${(err as Error).message}): ${WHY_NOT}. Fix: ${FIX}` };
  }
}

export interface CommandCgroup {
  dir: string;
  /** The file a process writes its pid to, to enter the cgroup. */
  procs: string;
  /** Kills what is left in it and removes it; never throws. */
  remove(): Promise<void>;
}

/** A child cgroup for one command, with its limits written before anything runs in it. */
export async function createCommandCgroup(parent: string, limits: CgroupLimits): Promise<CommandCgroup> {
  const dir = path.join(parent, `docent-cmd-${randomUUID()}`);
  await mkdir(dir);
  const set = (file: string, value: string) => writeFile(path.join(dir, file), value);
  await set('memory.max', String(limits.memoryBytes));
  // Without this the memory cap only moves pages to swap.
  await set('memory.swap.max', '0').catch(() => undefined);
  await set('pids.max', String(limits.maxProcesses));
  if (limits.cpus !== undefined) await set('cpu.max', `${Math.max(1000, Math.round(limits.cpus * CPU_PERIOD_US))} ${CPU_PERIOD_US}`);
  return {
    dir,
    procs: path.join(dir, 'cgroup.procs'),
    async remove() {
      await set('cgroup.kill', '1').catch(() => undefined);
      // The killed processes leave the cgroup asynchronously; rmdir succeeds once it is empty.
      for (let i = 0; i < 50; i++) {
        try {
          await rmdir(dir);
          return;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EBUSY') return;
          await new Promise((r) => setTimeout(r, 10));
        }
      }
    },
  };
}

/** Spawn prefix that puts the process in the cgroup before exec, so nothing it starts runs outside it. */
export function enterCgroupPrefix(procs: string): string[] {
  return ['/bin/sh', '-c', 'echo $$ > "$0" && exec "$@"', procs];
}
