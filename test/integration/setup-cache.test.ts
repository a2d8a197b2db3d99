// Cached setup with the real bubblewrap sandbox, real git, the system tar and zstd, and `npm ci` from the registry
// through the egress proxy: a second job restores instead of running setup, a changed key file misses, a poisoned
// entry is refused.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { chmod, copyFile, lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { simpleGit } from 'simple-git';
import { runCachedSetup, type CachedSetupOutcome } from '../../activities/agent-job/cached-setup';
import { prepareTurnSandbox } from '../../activities/agent-job/sandbox-workspace';
import { archiveRefusal, workerArchive } from '../../activities/agent-job/setup-archive';
import { hardenedGit } from '../../src/git/access';
import { SetupCache } from '../../activities/agent-job/setup-cache';
import { setupCacheKey } from '../../activities/agent-job/setup-cache-key';
import type { SandboxConfig } from '../../src/config';
import { parseEgressAllowRule } from '../../src/sandbox/egress/allow-rules';
import { labInternetAllow } from '../support/lab-internet';
import type { ProjectChecks } from '../../workflows/agent-job-contract';

const run = promisify(execFile);
const isRoot = process.getuid?.() === 0;
const MiB = 1024 * 1024;
// Not the default uid: other sandbox suites may run beside this one.
const config: SandboxConfig = {
  bwrapPath: 'bwrap',
  runAs: { uid: 61003, gid: 61003 },
  readOnlyPaths: [],
  egressAllow: [],
  cgroup: 'off',
  limits: { timeoutMs: 90_000, memoryBytes: 2 ** 30, maxProcesses: 256, maxFileBytes: 64 * MiB, maxDiskBytes: 512 * MiB, tmpBytes: 64 * MiB, maxInodes: 200_000 },
};

/** A project whose setup is `npm ci` of debug and its one dependency: a real install from the registry, kept small since
 * setup runs six times here (bench/setup-cache.ts times the restore against express 4, 72 packages). */
const fixture = path.resolve(__dirname, '../fixtures/npm-small-project');

// The second command leaves a random value in the clone and in HOME: equal values mean setup did not run again.
const setupCommands = ['npm ci --no-audit --no-fund', "head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \\n' > node_modules/.nonce && cp node_modules/.nonce ~/.nonce"];
const checksFor = (over: Partial<NonNullable<ProjectChecks['setupCache']>> = {}): ProjectChecks => ({
  setup: setupCommands,
  check: [],
  network: true,
  allowHosts: ['registry.npmjs.org'],
  setupCache: { project: 'cache-proj', keyFiles: ['package-lock.json', 'requirements.txt'], generation: 0, maintenance: ['test -f node_modules/debug/package.json'], ...over },
});

let root: string;
let origin: string;
let cache: SetupCache;
let cacheDir: string;
let jobs = 0;
const commits: Record<'first' | 'readme' | 'lock' | 'ignores', string> = { first: '', readme: '', lock: '', ignores: '' };

async function commitAll(message: string): Promise<string> {
  const git = simpleGit(origin);
  await git.add('.');
  await git.commit(message);
  return (await git.revparse(['HEAD'])).trim();
}

/** One job's turn: a fresh clone at the commit, a fresh HOME, the project's setup through the cache. */
async function job(commit: string, checks = checksFor(), withSecrets = false, ownerCode = true, sandboxConfig = config): Promise<CachedSetupOutcome & { clone: string; home: string }> {
  jobs += 1;
  const clone = path.join(root, `job${jobs}`);
  const home = path.join(root, `job${jobs}.home`);
  await run('git', ['clone', '--quiet', origin, clone]);
  // The worker's own git: the sandbox's user owns the worktree, which plain git calls dubious.
  const git = hardenedGit(clone, root);
  await git.raw(['checkout', '--quiet', '--detach', commit]);
  const sandbox = await prepareTurnSandbox(sandboxConfig, clone, home, { network: checks.network, allowHosts: checks.allowHosts });
  try {
    const outcome = await runCachedSetup({
      cache,
      checks,
      git,
      commit,
      root: clone,
      home,
      sandbox,
      run: (command) => sandbox.run(command, { tailBytes: 4096 }),
      withSecrets,
      ownerCode,
      readOnlyPaths: [],
    });
    return { ...outcome, clone, home };
  } finally {
    await sandbox.close();
  }
}

const total = (o: CachedSetupOutcome) => o.results.reduce((sum, r) => sum + r.durationMs, 0);
const entries = async () => (await readdir(cacheDir).catch(() => [] as string[])).filter((n) => /^[0-9a-f]{64}$/.test(n));

beforeAll(async () => {
  // The lab's relay to the registry, when its resolver answers with a documentation address (test/support/lab-internet.ts).
  config.egressAllow = (await labInternetAllow()).map(parseEgressAllowRule);
  root = await mkdtemp(path.join(os.tmpdir(), 'docent-setup-cache-test-'));
  // The sandbox's uid resolves bind sources by path: every parent must be searchable by it.
  await chmod(root, 0o711);
  cacheDir = path.join(root, 'cache');
  cache = new SetupCache({ dir: cacheDir, maxBytes: 512 * MiB });
  origin = path.join(root, 'origin');
  await mkdir(origin);
  const git = simpleGit(origin);
  await git.init();
  await git.addConfig('user.email', 'test@example.org');
  await git.addConfig('user.name', 'test');
  const lock = await readFile(path.join(fixture, 'package-lock.json'), 'utf8');
  await copyFile(path.join(fixture, 'package.json'), path.join(origin, 'package.json'));
  await writeFile(path.join(origin, 'package-lock.json'), lock);
  await writeFile(path.join(origin, '.gitignore'), 'node_modules/\n');
  commits.first = await commitAll('first');
  await writeFile(path.join(origin, 'README.md'), 'not a key file\n');
  commits.readme = await commitAll('readme');
  // The same dependencies, but another file: the key follows contents, not meaning.
  await writeFile(path.join(origin, 'package-lock.json'), `${lock}\n`);
  commits.lock = await commitAll('lock');
  await writeFile(path.join(origin, '.gitignore'), 'node_modules/\n*.log\n');
  commits.ignores = await commitAll('ignores');
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('cached setup', () => {
  let first: Awaited<ReturnType<typeof job>>;

  it('stores the first job’s setup and restores it for a second job with the same key, without running setup', async () => {
    first = await job(commits.first);
    expect(first.results.map((r) => [r.command, r.exitCode, r.cache])).toEqual(setupCommands.map((c) => [c, 0, 'miss']));
    expect(await entries()).toHaveLength(1);

    const second = await job(commits.first);
    expect(second.results.map((r) => [r.kind, r.exitCode, r.cache])).toEqual([
      ['setup', 0, 'hit'],
      ['setup', 0, 'hit'],
    ]);
    expect(second.results[0]!.command).toBe(`restore the cached result of: ${setupCommands.join(' && ')}`);
    expect(second.results[1]!.command).toBe('test -f node_modules/debug/package.json');
    // No setup command ran: the random values are the first job's, in the clone and in HOME.
    const nonce = await readFile(path.join(first.clone, 'node_modules/.nonce'), 'utf8');
    expect(await readFile(path.join(second.clone, 'node_modules/.nonce'), 'utf8')).toBe(nonce);
    expect(await readFile(path.join(second.home, '.nonce'), 'utf8')).toBe(nonce);
    // Restored as the sandbox's user, so the agent's commands can change it.
    if (isRoot) expect((await lstat(path.join(second.clone, 'node_modules/debug/package.json'))).uid).toBe(config.runAs.uid);
    // Nothing of the restore stays in HOME, and the clone's tracked files are untouched.
    expect(await readdir(second.home)).not.toContain('.docent-restore');
    expect((await hardenedGit(second.clone, root).raw(['status', '--porcelain'])).trim()).toBe('');
    const ratio = second.results[0]!.durationMs / total(first);
    console.log(`setup cache: first job's setup ${total(first)} ms, second job's restore ${second.results[0]!.durationMs} ms (${(ratio * 100).toFixed(1)}%)`);
  }, 240_000);

  it('hits at another commit whose key files are the same, and misses when a key file changed', async () => {
    const readme = await job(commits.readme);
    expect(readme.results[0]!.cache).toBe('hit');
    const changed = await job(commits.lock);
    expect(changed.results.map((r) => [r.command, r.cache])).toEqual(setupCommands.map((c) => [c, 'miss']));
    expect(await readFile(path.join(changed.clone, 'node_modules/.nonce'), 'utf8')).not.toBe(await readFile(path.join(first.clone, 'node_modules/.nonce'), 'utf8'));
    expect(await entries()).toHaveLength(2);
  }, 240_000);

  it('misses when the ignore rules changed, since they decide what an entry holds', async () => {
    const ignores = await job(commits.ignores);
    expect(ignores.results.map((r) => r.cache)).toEqual(['miss', 'miss']);
    expect(await entries()).toHaveLength(3);
  }, 240_000);

  it('refuses an entry with a symbolic link out of the clone, drops it and runs setup instead', async () => {
    // Poison the first commit's entry: the same archive plus node_modules/evil -> /etc.
    const poisoned = await entryHolding(await readFile(path.join(first.clone, 'node_modules/.nonce'), 'utf8'));
    const unpacked = path.join(root, 'unpacked');
    await mkdir(unpacked);
    const archive = path.join(cacheDir, poisoned, 'workspace.tar.zst');
    await run('tar', ['--extract', '--zstd', `--file=${archive}`, `--directory=${unpacked}`]);
    await symlink('/etc', path.join(unpacked, 'node_modules/evil'));
    await run('tar', ['--create', '--zstd', `--file=${archive}`, `--directory=${unpacked}`, 'node_modules']);

    const after = await job(commits.first);
    expect(after.refused).toMatch(/symbolic link "node_modules\/evil" -> "\/etc" leads outside/);
    expect(after.results.map((r) => [r.command, r.exitCode, r.cache])).toEqual(setupCommands.map((c) => [c, 0, 'miss']));
    await expect(lstat(path.join(after.clone, 'node_modules/evil'))).rejects.toThrow(/ENOENT/);
    // The poisoned entry went; the setup that ran instead was stored in its place, clean.
    expect(await archiveRefusal(path.join(cacheDir, poisoned, 'workspace.tar.zst'), 'workspace')).toBeUndefined();

    // An entry missing an archive (a disk that lost it) is refused the same way, never failing the turn.
    await rm(path.join(cacheDir, poisoned, 'home.tar.zst'));
    const damaged = await job(commits.first);
    expect(damaged.refused).toMatch(/^home: the archive is unreadable/);
    expect(damaged.results.map((r) => [r.exitCode, r.cache])).toEqual(setupCommands.map(() => [0, 'miss']));
  }, 240_000);

  it('refuses archives with a path climbing out or into .git', async () => {
    const dir = path.join(root, 'crafted');
    await mkdir(path.join(dir, 'inner/.git'), { recursive: true });
    await writeFile(path.join(dir, 'inner/.git/config'), '[core]\n');
    await writeFile(path.join(dir, 'outside.txt'), 'x');
    await run('tar', ['--create', '--zstd', '--file=../git.tar.zst', '.git'], { cwd: path.join(dir, 'inner') });
    await run('tar', ['--create', '--zstd', '--absolute-names', '--file=climb.tar.zst', '../outside.txt'], { cwd: path.join(dir, 'inner') });
    expect(await archiveRefusal(path.join(dir, 'git.tar.zst'), 'workspace')).toMatch(/inside \.git/);
    expect(await archiveRefusal(path.join(dir, 'inner/climb.tar.zst'), 'workspace')).toMatch(/climbs out/);
    // A setup that left HOME empty stores an archive of nothing, which restores as nothing.
    const empty = createWriteStream(path.join(dir, 'empty.tar.zst'));
    await workerArchive({ workspace: dir, home: dir })('home', [], empty, new AbortController().signal);
    await new Promise((resolve) => empty.end(resolve));
    expect(await archiveRefusal(path.join(dir, 'empty.tar.zst'), 'home')).toBeUndefined();
  });

  it('runs setup uncached when a turn gets secrets, or the project names no key files', async () => {
    const quick = { ...checksFor(), setup: ['mkdir -p node_modules && echo built > node_modules/built'] };
    const secret = await job(commits.first, quick, true);
    expect(secret.results.map((r) => [r.exitCode, r.cache])).toEqual([[0, 'off']]);
    const { setupCache: _none, ...keyless } = quick;
    const plain = await job(commits.first, keyless);
    expect(plain.results.map((r) => [r.exitCode, r.cache])).toEqual([[0, 'off']]);
    // Neither was stored: still only the entries the earlier jobs left.
    expect(await entries()).toHaveLength(3);
  }, 240_000);

  it('ignores the entries of an older generation after a clear, and evicts them when the project stores again', async () => {
    const before = await entries();
    const cleared = await job(commits.first, checksFor({ generation: 1 }));
    expect(cleared.results.map((r) => r.cache)).toEqual(['miss', 'miss']);
    const after = await entries();
    expect(after).toHaveLength(1);
    expect(before).not.toContain(after[0]);
  }, 240_000);
});

/** Commits package.json with this build script: what `npm run --silent build-env` (the setup below) executes. */
async function withBuildScript(script: string): Promise<string> {
  await writeFile(path.join(origin, 'package.json'), `${JSON.stringify({ name: 'trojan-fixture', version: '1.0.0', scripts: { 'build-env': script } }, null, 2)}\n`);
  return commitAll(`build-env: ${script}`);
}

/** tar processes archiving anything, seen from the host (a sandbox's PID namespace hides nothing from it). */
async function tarsRunning(): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await readdir('/proc')).filter((p) => /^\d+$/.test(p))) {
    const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    const args = cmd.split('\0');
    if (path.basename(args[0] ?? '') === 'tar' && args.includes('--create')) found.push(`${pid}: ${args.join(' ')}`);
  }
  return found;
}

describe('cached setup and hostile turns', () => {
  const state = (o: { clone: string }) => readFile(path.join(o.clone, 'node_modules/state'), 'utf8');
  const trojanChecks = (): ProjectChecks => ({
    setup: ['npm run --silent build-env'],
    check: [],
    network: false,
    setupCache: { project: 'trojan-proj', keyFiles: ['package-lock.json'], generation: 0, maintenance: [] },
  });

  it('never stores the setup of a turn that starts from the agent’s commits, and keys on the scripts setup runs', async () => {
    const clean = await withBuildScript('mkdir -p node_modules && echo clean > node_modules/state');
    // A follow-up turn whose branch changed package.json's scripts (the lockfile is the same): it runs first.
    const trojan = await withBuildScript('mkdir -p node_modules && echo trojan > node_modules/state');
    const before = await entries();
    const followUp = await job(trojan, trojanChecks(), false, false);
    expect(await state(followUp)).toBe('trojan\n');
    expect(followUp.notStored).toMatch(/commits the agent made/);
    expect(followUp.results.at(-1)!.output).toMatch(/\[setup cache\] not stored: the turn starts from commits the agent made/);
    expect(await entries()).toEqual(before);

    // The next job on the base ref runs the owners' setup and stores it; it never sees the trojan's result.
    const base = await job(clean, trojanChecks());
    expect(base.results.map((r) => r.cache)).toEqual(['miss']);
    expect(await state(base)).toBe('clean\n');
    const stored = (await entries()).filter((k) => !before.includes(k));
    expect(stored).toHaveLength(1);

    // Another follow-up on the trojan's scripts gets a key of its own (a miss), and stores nothing either.
    const again = await job(trojan, trojanChecks(), false, false);
    expect(again.results.map((r) => r.cache)).toEqual(['miss']);
    const later = await job(clean, trojanChecks());
    expect(later.results.map((r) => r.cache)).toEqual(['hit']);
    expect(await state(later)).toBe('clean\n');
    expect((await entries()).filter((k) => !before.includes(k))).toEqual(stored);
  }, 240_000);

  it('keys on the scripts a setup command names, the manifests of the folders it names, and manifests nobody listed', async () => {
    const git = hardenedGit(origin, root);
    const checks: ProjectChecks = { ...trojanChecks(), setup: ['bash ./scripts/setup.sh', 'cd app && npm ci'] };
    const keyAt = (commit: string) => setupCacheKey(git, commit, checks, checks.setupCache!, 'image');
    await mkdir(path.join(origin, 'scripts'), { recursive: true });
    await mkdir(path.join(origin, 'app/src'), { recursive: true });
    await writeFile(path.join(origin, 'scripts/setup.sh'), 'echo one\n');
    await writeFile(path.join(origin, 'app/package.json'), '{"name":"app","scripts":{}}\n');
    await writeFile(path.join(origin, 'app/src/index.js'), 'module.exports = 1;\n');
    const one = await commitAll('setup script one');
    await writeFile(path.join(origin, 'scripts/setup.sh'), 'echo two\n');
    const two = await commitAll('setup script two');
    await writeFile(path.join(origin, 'app/package.json'), '{"name":"app","scripts":{"postinstall":"node evil.js"}}\n');
    const three = await commitAll('a manifest in a folder setup names');
    await writeFile(path.join(origin, 'requirements-dev.txt'), 'pytest\n');
    const four = await commitAll('a manifest nobody listed');
    await writeFile(path.join(origin, 'app/src/index.js'), 'module.exports = 2;\n');
    const five = await commitAll('a source file of that folder, which setup does not run');
    const keys = await Promise.all([one, two, three, four, five].map(keyAt));
    expect(new Set(keys.slice(0, 4)).size).toBe(4);
    expect(keys[4]).toBe(keys[3]);
  });

  it('refuses to store fifty sparse 1 GiB files before reading them, and leaves no tar behind', async () => {
    const sparse = { ...config, limits: { ...config.limits, maxFileBytes: 2 * 1024 * MiB } };
    const checks: ProjectChecks = { ...trojanChecks(), setup: ['mkdir -p node_modules/big && for i in $(seq 1 50); do truncate -s 1G node_modules/big/f$i || exit 1; done'] };
    const before = await entries();
    const outcome = await job(commits.first, checks, false, true, sparse);
    expect(outcome.results.map((r) => [r.exitCode, r.cache])).toEqual([[0, 'miss']]);
    expect(outcome.notStored).toMatch(/setup left more than the cache's \d+ bytes in workspace \(sparse files count whole\)/);
    expect(await entries()).toEqual(before);
    expect(await tarsRunning()).toEqual([]);
  }, 240_000);

  it('stops an archive that passes the budget while it is written, inside the sandbox, and kills its tar', async () => {
    // Random bytes do not compress: 64 MiB of them pass a 32 MiB cache as they stream out.
    const small = new SetupCache({ dir: path.join(root, 'small-cache'), maxBytes: 32 * MiB });
    const saved = cache;
    cache = small;
    try {
      const checks: ProjectChecks = { ...trojanChecks(), setup: ['mkdir -p node_modules && head -c 40000000 /dev/urandom > node_modules/a && head -c 20000000 /dev/urandom > node_modules/b'] };
      // Apparent size 60 MB: over 32 MiB already, so the walk refuses; a 30 MiB budget per archive is tested below.
      const outcome = await job(commits.first, checks);
      expect(outcome.notStored).toMatch(/more than the cache's/);
      const streamed = await job(commits.first, { ...checks, setup: ['mkdir -p node_modules && head -c 20000000 /dev/urandom > node_modules/a && head -c 20000000 /dev/urandom > ~/b'] });
      // Each root is under the budget, both together are not: the second archive is stopped while written.
      expect(streamed.notStored).toMatch(/the archive of home passed the cache's \d+ bytes/);
      expect(await readdir(path.join(root, 'small-cache'))).toEqual([]);
      expect(await tarsRunning()).toEqual([]);
    } finally {
      cache = saved;
    }
  }, 240_000);
});

/** The stored entry whose clone archive holds this setup's random value. */
async function entryHolding(nonce: string): Promise<string> {
  for (const key of await entries()) {
    const { stdout } = await run('tar', ['--extract', '--zstd', '--to-stdout', `--file=${path.join(cacheDir, key, 'workspace.tar.zst')}`, 'node_modules/.nonce']);
    if (stdout === nonce) return key;
  }
  throw new Error('no entry holds the first job’s setup');
}

describe("a worker's setup cache size cap", () => {
  it('evicts the least recently used entries first, keeping the ones jobs restored lately', async () => {
    const src = path.join(root, 'lru-src');
    await mkdir(path.join(src, 'home'), { recursive: true });
    await mkdir(path.join(src, 'workspace'), { recursive: true });
    // Random bytes do not compress: each entry weighs about the same.
    await writeFile(path.join(src, 'workspace', 'blob'), randomBytes(64 * 1024));
    const roots = { workspace: { dir: path.join(src, 'workspace'), paths: ['blob'] }, home: { dir: path.join(src, 'home'), paths: [] } };
    const key = (n: number) => createHash('sha256').update(`entry ${n}`).digest('hex');
    const owner = { project: 'lru-proj', generation: 0 };
    const probe = new SetupCache({ dir: path.join(root, 'lru-probe'), maxBytes: 2 ** 30 });
    expect(await probe.store(key(0), owner, roots)).toEqual({ stored: true });
    const { bytes } = JSON.parse(await readFile(path.join(root, 'lru-probe', key(0), 'meta.json'), 'utf8'));

    const capped = new SetupCache({ dir: path.join(root, 'lru'), maxBytes: Math.floor(bytes * 2.5) });
    await capped.store(key(1), owner, roots);
    await capped.store(key(2), owner, roots);
    // A job restores entry 1: entry 2 is now the least recently used.
    expect(await capped.find(key(1))).toBeDefined();
    await capped.store(key(3), owner, roots);
    expect(await capped.find(key(2))).toBeUndefined();
    expect(await capped.find(key(1))).toBeDefined();
    expect(await capped.find(key(3))).toBeDefined();
    // An entry larger than the whole cap is not kept at all.
    const tiny = new SetupCache({ dir: path.join(root, 'lru-tiny'), maxBytes: Math.floor(bytes / 2) });
    expect(await tiny.store(key(4), owner, roots)).toEqual({ stored: false, reason: expect.stringMatching(/the cache's \d+ bytes/) });
  });
});
