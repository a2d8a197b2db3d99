// The sandbox against the real bwrap on this machine: every boundary is tried from inside, no mocks.
import { spawnSync } from 'node:child_process';
import { pbkdf2, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { probeSandbox, runInSandbox, SandboxUnavailable, type SandboxSpec } from '../../src/sandbox';
import { startTurnEgress } from '../../src/sandbox/egress';

// As root, run bwrap as an unprivileged uid: RLIMIT_NPROC does not bind real uid 0.
const isRoot = process.getuid?.() === 0;
const runAs = isRoot ? { uid: 61000, gid: 61000 } : undefined;
const MiB = 1024 * 1024;

let root: string;
let workspace: string;
let home: string;

async function ownedDir(p: string): Promise<void> {
  await mkdir(p, { recursive: true });
  if (runAs) await chown(p, runAs.uid, runAs.gid);
}

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'docent-sandbox-test-'));
  // bwrap (0.8.0) resolves bind sources by path as the runAs uid: every parent must be searchable by it.
  await chmod(root, 0o711);
  workspace = path.join(root, 'workspace');
  home = path.join(root, 'home');
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

beforeEach(async () => {
  await rm(workspace, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
  await ownedDir(workspace);
  await ownedDir(home);
});

function spec(over: Partial<SandboxSpec> = {}, limits: Partial<SandboxSpec['limits']> = {}): SandboxSpec {
  return {
    workspace,
    home,
    network: false,
    runAs,
    ...over,
    limits: { timeoutMs: 20_000, memoryBytes: 2 ** 30, maxProcesses: 256, maxFileBytes: 64 * MiB, maxDiskBytes: 256 * MiB, tmpBytes: 64 * MiB, ...limits },
  };
}

/** Processes anywhere on the host whose command line contains `token`. */
async function processesWith(token: string): Promise<number> {
  let n = 0;
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmd.includes(token)) n++;
  }
  return n;
}

describe('sandbox: identity and isolation', () => {
  it('runs as runAs with no capabilities, no nested user namespaces and its own PID namespace', async () => {
    const r = await runInSandbox(spec(), 'id -u; grep CapEff /proc/self/status; unshare -U true && echo nested-userns-allowed || echo nested-userns-denied; echo pid1=$(cat /proc/1/comm)');
    expect(r.exitCode).toBe(0);
    if (runAs) expect(r.output).toMatch(new RegExp(`^${runAs.uid}\n`));
    expect(r.output).toContain('CapEff:\t0000000000000000');
    expect(r.output).toContain('nested-userns-denied');
    expect(r.output).toContain('pid1=bwrap');
  });

  it('shows neither a secret nor anything else of the worker environment, not even in /proc/*/environ', async () => {
    const secret = `s3cret-${randomBytes(12).toString('hex')}`;
    process.env.DOCENT_TEST_SECRET = secret;
    try {
      const r = await runInSandbox(spec(), "env; echo ---; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'");
      expect(r.exitCode).toBe(0);
      expect(r.output).not.toContain(secret);
      expect(r.output).not.toContain('DOCENT_TEST_SECRET');
      const names = new Set(
        r.output
          .split('\n')
          .filter((l) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(l))
          .map((l) => l.slice(0, l.indexOf('='))),
      );
      // What we set, plus what the shell itself maintains.
      const allowed = new Set(['PATH', 'HOME', 'LANG', 'TMPDIR', 'CI', 'PWD', 'OLDPWD', 'SHLVL', '_']);
      expect([...names].filter((n) => !allowed.has(n))).toEqual([]);
      for (const [k, v] of Object.entries(process.env)) {
        if (allowed.has(k) || !v || v.length < 8) continue;
        expect(r.output).not.toContain(`${k}=`);
      }
      expect(r.output).toContain('HOME=/home/sandbox');
      expect(r.output).toContain('CI=true');
      expect(r.output).toContain('LANG=C.UTF-8');
      expect(r.output).toContain('TMPDIR=/tmp');
    } finally {
      delete process.env.DOCENT_TEST_SECRET;
    }
  });

  it('gives a command the variables it is handed, out of every host process listing, and refuses names the sandbox sets', async () => {
    const value = `v-${randomBytes(12).toString('hex')}`;
    const seen: string[] = [];
    const listing = setInterval(() => {
      // What any host user sees of running processes' command lines while the command runs.
      for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
        try {
          seen.push(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
        } catch {
          // Gone meanwhile.
        }
      }
    }, 5);
    try {
      const r = await runInSandbox(spec(), 'sleep 0.2; printf %s "$TOKEN_FOR_SETUP"', { env: { TOKEN_FOR_SETUP: value } });
      expect(r.output).toBe(value);
    } finally {
      clearInterval(listing);
    }
    expect(seen.some((c) => c.includes('bwrap'))).toBe(true);
    expect(seen.some((c) => c.includes(value))).toBe(false);
    await expect(runInSandbox(spec(), 'true', { env: { HOME: '/root' } })).rejects.toThrow(TypeError);
    await expect(runInSandbox(spec(), 'true', { env: { 'BAD-NAME': 'x' } })).rejects.toThrow(TypeError);
  });

  it('never shares the host network: with network on, only the egress proxy socket, CA certificates and no resolver', async () => {
    let connections = 0;
    const server = http.createServer((_req, res) => res.end('hello-from-host\n'));
    server.on('connection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const egress = await startTurnEgress({ operatorAllow: [], allowHosts: [], owner: runAs });
    try {
      const denied = await runInSandbox(spec(), `curl -sS -m 2 http://127.0.0.1:${port}/`);
      expect(denied.exitCode).not.toBe(0);
      expect(denied.output).not.toContain('hello-from-host');

      await expect(runInSandbox(spec({ network: true }), 'true')).rejects.toThrow(/egressSocket/);
      const on = await runInSandbox(
        spec({ network: true, egressSocket: egress.socketPath }),
        `env -u HTTP_PROXY -u http_proxy curl -sS -m 5 http://127.0.0.1:${port}/; test -r /etc/ssl/certs/ca-certificates.crt && echo certs-ok; test -e /etc/resolv.conf || echo no-resolver; echo "$HTTPS_PROXY $npm_config_https_proxy $PIP_PROXY"`,
      );
      expect(on.output).toContain(`Failed to connect to 127.0.0.1 port ${port}`);
      expect(on.output).toContain('certs-ok\nno-resolver\nhttp://127.0.0.1:3128 http://127.0.0.1:3128 http://127.0.0.1:3128\n');
      expect(connections).toBe(0);
    } finally {
      await egress.close();
      await new Promise((r) => server.close(r));
    }
  });

  it('sees only its own loopback interface without network', async () => {
    const r = await runInSandbox(spec(), "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '");
    expect(r.output).toBe('lo\n');
  });
});

describe('sandbox: filesystem', () => {
  it('keeps /usr and /etc read-only, /tmp private, /workspace writable and .git read-only; exposes nothing else of the host', async () => {
    await mkdir(path.join(workspace, '.git', 'hooks'), { recursive: true });
    await writeFile(path.join(workspace, '.git', 'config'), '[core]\n\tbare = false\n');
    if (runAs) {
      // Writable by the sandbox uid on the host: only the read-only bind stops it.
      for (const p of ['.git', '.git/hooks', '.git/config']) await chown(path.join(workspace, p), runAs.uid, runAs.gid);
    }
    const marker = `docent-sbx-${randomBytes(6).toString('hex')}`;
    const cmd = [
      'touch /usr/x 2>/dev/null && echo usr-writable || echo usr-ro',
      'touch /usr/bin/x 2>/dev/null && echo usrbin-writable || echo usrbin-ro',
      'touch /etc/x 2>/dev/null && echo etc-writable || echo etc-ro',
      'touch /x 2>/dev/null && echo root-writable || echo root-ro',
      'touch /home/x 2>/dev/null && echo home-parent-writable || echo home-parent-ro',
      'echo >> /etc/passwd 2>/dev/null && echo passwd-writable || echo passwd-ro',
      `echo inside > /tmp/${marker} && echo tmp-ok`,
      'echo from-sandbox > /workspace/x && echo ws-ok',
      'echo "[core] hooksPath=/tmp" >> /workspace/.git/config 2>/dev/null && echo git-writable || echo git-ro',
      'touch /workspace/.git/hooks/pre-commit 2>/dev/null && echo hooks-writable || echo hooks-ro',
      'rm -rf /workspace/.git 2>/dev/null; test -d /workspace/.git && echo git-still-there',
      'echo home > /home/sandbox/h && echo home-ok',
      'test -e /root && ls -A /root | wc -l | sed "s/^/root-entries=/" || echo no-root',
      'ls -A /home | tr "\\n" " " | sed "s/^/home-entries=/"; echo',
      'for p in /var /run /etc/shadow /etc/ssl/private /etc/resolv.conf /sys /work /opt /srv /mnt; do test -e $p && echo "present:$p"; done',
      `test -e ${process.cwd()} && echo worker-cwd-visible`,
      'ls -A /etc | tr "\\n" " " | sed "s/^/etc-entries=/"; echo',
      'getent hosts localhost | head -1 | sed "s/^/localhost=/"; getent hosts "$(cat /proc/sys/kernel/hostname)" | sed "s/^/own-name=/"',
    ].join('\n');
    const r = await runInSandbox(spec(), cmd);
    const out = r.output;
    expect(out).toContain('usr-ro');
    expect(out).toContain('usrbin-ro');
    expect(out).toContain('etc-ro');
    expect(out).toContain('root-ro');
    expect(out).toContain('home-parent-ro');
    expect(out).toContain('passwd-ro');
    expect(out).toContain('tmp-ok');
    expect(out).toContain('ws-ok');
    expect(out).toContain('git-ro');
    expect(out).toContain('hooks-ro');
    expect(out).toContain('git-still-there');
    expect(out).toContain('home-ok');
    expect(out).toContain('no-root');
    expect(out).toMatch(/home-entries=sandbox \n/);
    expect(out).not.toContain('present:');
    expect(out).not.toContain('worker-cwd-visible');
    const etc = out
      .match(/etc-entries=(.*)/)![1]!
      .trim()
      .split(' ');
    for (const e of etc) expect(['passwd', 'group', 'nsswitch.conf', 'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'alternatives', 'localtime', 'ssl', 'hosts']).toContain(e);
    // The sandbox's own /etc/hosts: localhost resolves, nothing of the host's names or addresses is there.
    expect(out).toMatch(/localhost=(127\.0\.0\.1|::1) +localhost/);
    expect(out).toMatch(/own-name=127\.0\.1\.1 +sandbox/);

    expect(existsSync(path.join(os.tmpdir(), marker))).toBe(false);
    expect(existsSync(`/tmp/${marker}`)).toBe(false);
    expect(await readFile(path.join(workspace, 'x'), 'utf8')).toBe('from-sandbox\n');
    expect(await readFile(path.join(home, 'h'), 'utf8')).toBe('home\n');
    expect(await readFile(path.join(workspace, '.git', 'config'), 'utf8')).toBe('[core]\n\tbare = false\n');
    expect(existsSync(path.join(workspace, '.git', 'hooks', 'pre-commit'))).toBe(false);
  });

  it("binds a job's context repositories read-only at /context, even where the host would let the sandbox's user write", async () => {
    const context = path.join(root, 'context');
    await rm(context, { recursive: true, force: true });
    await ownedDir(path.join(context, 'acme', 'code'));
    await writeFile(path.join(context, 'acme', 'code', 'answer.js'), 'module.exports = 42;\n');
    if (runAs) await chown(path.join(context, 'acme', 'code', 'answer.js'), runAs.uid, runAs.gid);
    const cmd = [
      'cat /context/acme/code/answer.js',
      'echo 0 > /context/acme/code/answer.js 2>/dev/null && echo file-writable || echo file-ro',
      'touch /context/acme/code/new 2>/dev/null && echo folder-writable || echo folder-ro',
    ].join('\n');
    const r = await runInSandbox(spec({ context }), cmd);
    expect(r.output).toContain('module.exports = 42;');
    expect(r.output).toContain('file-ro');
    expect(r.output).toContain('folder-ro');
    expect(await readFile(path.join(context, 'acme', 'code', 'answer.js'), 'utf8')).toBe('module.exports = 42;\n');
    expect(existsSync(path.join(context, 'acme', 'code', 'new'))).toBe(false);
  });

  it('bounds /tmp by tmpBytes', async () => {
    const r = await runInSandbox(spec({}, { tmpBytes: 4 * MiB }), 'head -c 8388608 /dev/zero > /tmp/big; echo rc=$?; stat -c %s /tmp/big');
    expect(r.output).toMatch(/rc=[1-9]/);
    expect(Number(r.output.trim().split('\n').pop())).toBeLessThanOrEqual(4 * MiB);
  });

  // Only root runs the sandbox as another uid; otherwise the caller's own folders are always searchable to it.
  const searchTitle = runAs
    ? 'refuses to start when the workspace is under a directory the runAs uid cannot search'
    : 'starts in a workspace under a 0700 directory of the caller (not root: the sandbox runs as the caller)';
  it(searchTitle, async () => {
    const hidden = path.join(root, 'hidden');
    await mkdir(hidden, { mode: 0o700 });
    await chmod(hidden, 0o700);
    const ws = path.join(hidden, 'ws');
    await ownedDir(ws);
    const outcome = await runInSandbox(spec({ workspace: ws }), 'true').catch((e: unknown) => e);
    if (runAs) {
      expect(outcome).toBeInstanceOf(SandboxUnavailable);
      expect((outcome as Error).message).toMatch(/searchable/);
    } else expect(outcome).toMatchObject({ exitCode: 0 });
  });
});

describe('sandbox: limits', () => {
  it('stops `sleep 30` at the wall-time limit with 124 and leaves nothing behind', async () => {
    // The background job outlives the limit by far, so a sandbox that left it running would show it.
    const token = '20.718281';
    const t0 = performance.now();
    const r = await runInSandbox(spec({}, { timeoutMs: 1000 }), `(sleep ${token}; touch /workspace/late) & sleep 30`);
    // Stopped by the limit, not by the command's 30 s: well under it, however loaded the machine.
    expect(performance.now() - t0).toBeLessThan(15_000);
    expect(r.exitCode).toBe(124);
    expect(r.stoppedBy).toBe('timeout');
    expect(r.durationMs).toBeGreaterThanOrEqual(900);
    expect(r.durationMs).toBeLessThan(15_000);
    // The background job is gone, so its later write can never happen: no need to wait past its sleep.
    expect(await processesWith(`sleep ${token}`)).toBe(0);
    expect(existsSync(path.join(workspace, 'late'))).toBe(false);
  });

  it('kills what the command left in the background when its shell exits', async () => {
    const token = '20.141592';
    const r = await runInSandbox(spec(), `(sleep ${token}; touch /workspace/late) & echo bye`);
    expect(r.exitCode).toBe(0);
    expect(r.stoppedBy).toBeUndefined();
    expect(r.output).toBe('bye\n');
    // Returned when the shell exited, not when the background job would have (20 s).
    expect(r.durationMs).toBeLessThan(15_000);
    expect(await processesWith(`sleep ${token}`)).toBe(0);
    expect(existsSync(path.join(workspace, 'late'))).toBe(false);
  });

  it('reports the exit code, and 128+signal for a command killed by a signal', async () => {
    expect((await runInSandbox(spec(), 'exit 7')).exitCode).toBe(7);
    expect((await runInSandbox(spec(), 'kill -TERM $$')).exitCode).toBe(143);
  });

  it('contains a fork bomb; the host can still spawn processes afterwards', async () => {
    const token = `bomb${randomBytes(4).toString('hex')}`;
    const t0 = performance.now();
    const r = await runInSandbox(spec({}, { maxProcesses: 32, timeoutMs: 5000 }), `# ${token}\nf(){ f|f & }; f; sleep 1; echo bomb-done`);
    expect(performance.now() - t0).toBeLessThan(15_000);
    expect(r.output).toMatch(/Cannot fork|Resource temporarily unavailable|bomb-done/);
    if (runAs) expect(r.output).toContain('Cannot fork');
    const host = spawnSync('true');
    expect(host.status).toBe(0);
    expect(await processesWith(token)).toBe(0);
  });

  it('fails an allocation past memoryBytes (RLIMIT_DATA) while a small one works', async () => {
    // Debian's perl under the sandbox's /usr: a program from the checkout is out of the sandbox user's reach when the
    // checkout sits in a folder only its owner can enter (a home folder of mode 0700).
    const s = spec({}, { memoryBytes: 1024 * MiB });
    const small = await runInSandbox(s, `perl -e '$x = "a" x (16 << 20); print "small-ok\\n"'`);
    expect(small.output).toContain('small-ok');
    expect(small.exitCode).toBe(0);
    const big = await runInSandbox(s, `perl -e '$x = "a" x (1536 * 1024 * 1024); print "big-ok\\n"'`);
    expect(big.output).not.toContain('big-ok');
    expect(big.exitCode).not.toBe(0);
  });

  it('stops a write past maxFileBytes (RLIMIT_FSIZE) with the file no larger than the cap', async () => {
    const r = await runInSandbox(spec({}, { maxFileBytes: MiB }), 'head -c 3000000 /dev/zero > /workspace/big; echo rc=$?');
    expect(r.output).toMatch(/rc=[1-9]/);
    expect((await stat(path.join(workspace, 'big'))).size).toBeLessThanOrEqual(MiB);
  });

  it('kills a command whose files grow the workspace filesystem past maxDiskBytes', async () => {
    // Bounded (400 MiB at most) so a broken watcher cannot fill the disk; the sleep leaves time to notice.
    const cmd = 'i=0; while [ $i -lt 400 ]; do head -c 1048576 /dev/zero > f$i || exit 9; i=$((i+1)); done; sync; sleep 30';
    const r = await runInSandbox(spec({}, { maxDiskBytes: 16 * MiB, maxFileBytes: 2 * MiB, timeoutMs: 60_000 }), cmd);
    expect(r.stoppedBy).toBe('disk');
    expect(r.exitCode).toBe(137);
    expect(r.durationMs).toBeLessThan(30_000);
  });

  it('kills a command that creates more than maxInodes files, however small', async () => {
    // Bounded (20,000 empty files) so a broken watcher cannot exhaust the filesystem; the sleep leaves time to notice.
    const cmd = 'mkdir many && cd many && i=0; while [ $i -lt 20000 ]; do : > f$i || exit 9; i=$((i+1)); done; sleep 30';
    const r = await runInSandbox(spec({}, { maxInodes: 2000, timeoutMs: 60_000 }), cmd);
    expect(r.stoppedBy).toBe('disk');
    expect(r.exitCode).toBe(137);
    expect(r.durationMs).toBeLessThan(30_000);
  });

  it('caps /dev/shm and keeps /dev read-only, with its device nodes usable', async () => {
    const cmd = [
      'head -c 300000000 /dev/zero > /dev/shm/big; echo shm-rc=$?',
      'echo shm-bytes=$(stat -c %s /dev/shm/big)',
      'touch /dev/evil 2>/dev/null && echo dev-writable || echo dev-ro',
      'mkdir /dev/x 2>/dev/null && echo dev-mkdir || echo dev-no-mkdir',
      'echo x > /dev/null && head -c 4 /dev/urandom | wc -c | sed "s/^/urandom=/"',
    ].join('\n');
    const r = await runInSandbox(spec({}, { shmBytes: 16 * MiB, maxFileBytes: 512 * MiB }), cmd);
    expect(r.output).toMatch(/shm-rc=[1-9]/);
    expect(Number(/shm-bytes=(\d+)/.exec(r.output)?.[1])).toBeLessThanOrEqual(16 * MiB);
    expect(r.output).toContain('dev-ro\ndev-no-mkdir\nurandom=4\n');
  });

  it('starts the sandbox inside the per-command cgroup, with its limits written first (a directory stands in for cgroupfs)', async () => {
    const parent = await mkdtemp(path.join(os.tmpdir(), 'docent-cgroup-parent-'));
    try {
      const r = await runInSandbox(spec({ cgroup: parent }, { memoryBytes: 256 * MiB, maxProcesses: 40, cpus: 0.5 }), 'echo inside');
      expect(r).toMatchObject({ exitCode: 0, output: 'inside\n' });
      // A real cgroup directory is removed afterwards; this stand-in keeps its files, so what was written shows.
      const [child, ...more] = await readdir(parent);
      expect(more).toEqual([]);
      const read = (f: string) => readFile(path.join(parent, child!, f), 'utf8');
      expect([await read('memory.max'), await read('pids.max'), await read('cpu.max')]).toEqual([String(256 * MiB), '40', '50000 100000']);
      // The launcher wrote its own pid before exec'ing setpriv/bwrap, so the whole sandbox starts inside.
      expect(await read('cgroup.procs')).toMatch(/^\d+\n$/);
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });

  it('stops promptly when the signal is aborted', async () => {
    const ac = new AbortController();
    const t0 = performance.now();
    setTimeout(() => ac.abort(), 500);
    const r = await runInSandbox(spec(), 'sleep 30', { signal: ac.signal });
    // Stopped by the abort, not by the command's end 30 s later.
    expect(performance.now() - t0).toBeLessThan(15_000);
    expect(r.stoppedBy).toBe('cancelled');
    expect(r.exitCode).toBe(137);
  });

  it('does not start at all with an already aborted signal', async () => {
    const ac = new AbortController();
    ac.abort();
    const r = await runInSandbox(spec(), 'touch /workspace/ran', { signal: ac.signal });
    expect(r.stoppedBy).toBe('cancelled');
    expect(existsSync(path.join(workspace, 'ran'))).toBe(false);
  });
});

describe('sandbox: output', () => {
  it('keeps head, omission line and tail of `seq 1 200000`, counting every byte', async () => {
    const r = await runInSandbox(spec(), 'seq 1 200000');
    let total = 0;
    for (let i = 1; i <= 200000; i++) total += String(i).length + 1;
    expect(r.exitCode).toBe(0);
    expect(r.outputBytes).toBe(total);
    expect(r.output.startsWith('1\n2\n3\n')).toBe(true);
    expect(r.output.endsWith('199999\n200000\n')).toBe(true);
    const m = r.output.match(/\n\[\.\.\. (\d+) bytes omitted \.\.\.\]\n/);
    expect(m).not.toBeNull();
    expect(Number(m![1])).toBe(total - 4096 - 12288);
    expect(Buffer.byteLength(r.output)).toBeLessThan(4096 + 12288 + 100);
  });

  it('interleaves stdout and stderr as produced and keeps short output whole', async () => {
    const r = await runInSandbox(spec(), 'echo a; echo b >&2; echo c; echo d >&2');
    expect(r.output).toBe('a\nb\nc\nd\n');
    expect(r.outputBytes).toBe(8);
  });

  it('never splits a UTF-8 character at the cut points', async () => {
    // 2-, 3- and 4-byte characters, 9 bytes per round.
    const r = await runInSandbox(spec(), "i=0; while [ $i -lt 3000 ]; do printf 'é€😀'; i=$((i+1)); done", { headBytes: 100, tailBytes: 101 });
    expect(r.outputBytes).toBe(27000);
    expect(r.output).not.toContain('\uFFFD');
    const [head, tail] = r.output.split(/\n\[\.\.\. \d+ bytes omitted \.\.\.\]\n/);
    expect(Buffer.byteLength(head!)).toBeLessThanOrEqual(100);
    expect(Buffer.byteLength(tail!)).toBeLessThanOrEqual(101);
    expect(Buffer.byteLength(head!)).toBeGreaterThan(96);
    expect(Buffer.byteLength(tail!)).toBeGreaterThan(97);
    expect(r.output).toMatch(/\[\.\.\. \d+ bytes omitted \.\.\.\]/);
    const omitted = Number(r.output.match(/(\d+) bytes omitted/)![1]);
    expect(omitted + Buffer.byteLength(head!) + Buffer.byteLength(tail!)).toBe(27000);
  });

  it('keeps memory bounded for a large output', async () => {
    const r = await runInSandbox(spec(), 'head -c 200000000 /dev/zero | tr "\\0" x');
    expect(r.outputBytes).toBe(200_000_000);
    expect(r.output.length).toBeLessThan(4096 + 12288 + 100);
  });
});

describe('probeSandbox', () => {
  it('resolves with the real bwrap', async () => {
    await expect(probeSandbox(spec())).resolves.toBeUndefined();
  });

  it('throws SandboxUnavailable with what failed and the fix when bwrap is missing', async () => {
    const err = await probeSandbox(spec({ bwrapPath: '/nonexistent/bwrap' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SandboxUnavailable);
    expect((err as Error).message).toMatch(/nonexistent\/bwrap/);
    expect((err as Error).message).toMatch(/No such file|ENOENT/);
    expect((err as Error).message).toMatch(/apt-get install bubblewrap/);
  });

  it('settles every time when bwrap fails at once, even while the thread pool is busy (listeners attached before any await)', async () => {
    // Four endless pbkdf2 jobs fill libuv's thread pool: every fs call after spawn() waits its turn, long enough for
    // setpriv to fail, exit and have Node discard its unread stderr and emit 'close' before a late listener exists.
    let busy = true;
    const spin = () => {
      if (busy) pbkdf2('x', 'y', 20_000, 32, 'sha256', spin);
    };
    for (let i = 0; i < 4; i++) spin();
    const within = async <T>(p: Promise<T>) => {
      let timer: NodeJS.Timeout | undefined;
      // A call that never settles is the failure; 15 s tells it from a slow one on a loaded machine.
      const late = new Promise<string>((r) => (timer = setTimeout(() => r('still pending after 15 s'), 15_000)));
      try {
        return await Promise.race([p, late]);
      } finally {
        clearTimeout(timer);
      }
    };
    try {
      for (let i = 0; i < 20; i++) {
        // Through setpriv when root: it spawns, then its exec of the missing bwrap fails with a message on stderr.
        const probed = await within(probeSandbox(spec({ bwrapPath: '/nonexistent/bwrap' })).catch((e: unknown) => e));
        expect(probed).toBeInstanceOf(SandboxUnavailable);
        expect((probed as Error).message).toMatch(/nonexistent\/bwrap.*(No such file|ENOENT)/);
        // Spawned directly: Node's spawn itself fails, as an 'error' event on the next tick.
        const direct = await within(runInSandbox(spec({ runAs: undefined, bwrapPath: '/nonexistent/bwrap' }), 'true').catch((e: unknown) => e));
        expect(direct).toBeInstanceOf(SandboxUnavailable);
        expect((direct as Error).message).toMatch(/spawn \/nonexistent\/bwrap ENOENT/);
      }
    } finally {
      busy = false;
    }
  });

  it('settles soon after the sandbox process exits even if something it left behind holds the output pipe', async () => {
    // A stand-in for bwrap that says "started", leaves a child holding stdout and stderr, and exits 0.
    const token = '31.41421';
    const fake = path.join(root, 'fake-bwrap');
    await writeFile(fake, `#!/bin/sh\nprintf . >&3\nexec 3>&-\nsleep ${token} &\necho hi\nexit 0\n`, { mode: 0o755 });
    await chmod(fake, 0o755);
    const t0 = performance.now();
    const r = await runInSandbox(spec({ bwrapPath: fake }), 'true');
    // Settled after the grace, not when the left-behind child ends (31 s).
    expect(performance.now() - t0).toBeLessThan(15_000);
    expect(r.exitCode).toBe(0);
    expect(r.stoppedBy).toBeUndefined();
    expect(r.output).toBe('hi\n');
    // It was in the sandbox process's group, which is killed once the grace after exit runs out.
    expect(await processesWith(`sleep ${token}`)).toBe(0);
  });

  it('runInSandbox throws SandboxUnavailable, not a result, when bwrap cannot set up', async () => {
    const err = await runInSandbox(spec({ readOnlyPaths: ['/nonexistent/toolchain'] }), 'true').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SandboxUnavailable);
    expect((err as Error).message).toMatch(/Can't find source path/);
  });
});
