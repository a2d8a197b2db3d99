// cgroup v2 set-up and per-command limits, written against a directory shaped like a delegated cgroup (this host
// mounts cgroup v1 for memory, cpu and pids, so the kernel's own files cannot be used here).
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { cgroup2MountOf, createCommandCgroup, setUpCgroup, unifiedPathOf } from '../../src/sandbox/cgroup';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'docent-cgroup-test-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function fakeProc(cgroupLine: string, mount: string): Promise<{ cgroup: string; mountinfo: string }> {
  const cgroup = path.join(dir, 'proc-cgroup');
  const mountinfo = path.join(dir, 'proc-mountinfo');
  await writeFile(cgroup, `12:pids:/\n${cgroupLine}\n`);
  await writeFile(mountinfo, `30 24 0:26 / ${mount} rw,nosuid - cgroup2 cgroup2 rw\n31 24 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n`);
  return { cgroup, mountinfo };
}

describe('cgroup v2', () => {
  it('reads the process path and the cgroup2 mount from /proc', () => {
    expect(unifiedPathOf('4:memory:/x\n0::/system.slice/docent.service\n')).toBe('/system.slice/docent.service');
    expect(unifiedPathOf('4:memory:/x\n')).toBeUndefined();
    expect(cgroup2MountOf('30 24 0:26 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n')).toBe('/sys/fs/cgroup/unified');
  });

  it('says why not and how to fix it when memory, pids or cpu are not delegated (a v1 or hybrid host)', async () => {
    const mount = path.join(dir, 'unified');
    await mkdir(mount);
    await writeFile(path.join(mount, 'cgroup.controllers'), 'hugetlb\n');
    const setup = await setUpCgroup('auto', await fakeProc('0::/', mount));
    expect(setup.dir).toBeUndefined();
    expect(setup.message).toMatch(/does not delegate memory, pids, cpu \(it has: hugetlb\): sandboxed commands run with per-process rlimits only/);
    expect(setup.message).toContain('Delegate=yes');
    expect((await setUpCgroup('off')).message).toContain('DOCENT_SANDBOX_CGROUP=off');
  });

  it('moves the worker into a leaf and enables the controllers for the commands beside it', async () => {
    const own = path.join(dir, 'fs', 'docent.service');
    await mkdir(own, { recursive: true });
    await writeFile(path.join(own, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
    await writeFile(path.join(own, 'cgroup.subtree_control'), '');
    const setup = await setUpCgroup('auto', await fakeProc('0::/docent.service', path.join(dir, 'fs')));
    expect(setup.dir).toBe(own);
    expect(await readFile(path.join(own, 'docent-worker', 'cgroup.procs'), 'utf8')).toBe(String(process.pid));
    expect(await readFile(path.join(own, 'cgroup.subtree_control'), 'utf8')).toBe('+memory +pids +cpu');
  });

  it('writes memory.max, memory.swap.max, pids.max and cpu.max for one command', async () => {
    const cg = await createCommandCgroup(dir, { memoryBytes: 512 * 1024 * 1024, maxProcesses: 64, cpus: 1.5 });
    expect(path.dirname(cg.dir)).toBe(dir);
    const read = (f: string) => readFile(path.join(cg.dir, f), 'utf8');
    expect(await read('memory.max')).toBe(String(512 * 1024 * 1024));
    expect(await read('memory.swap.max')).toBe('0');
    expect(await read('pids.max')).toBe('64');
    expect(await read('cpu.max')).toBe('150000 100000');
    expect(cg.procs).toBe(path.join(cg.dir, 'cgroup.procs'));
    await expect(cg.remove()).resolves.toBeUndefined();
  });
});
