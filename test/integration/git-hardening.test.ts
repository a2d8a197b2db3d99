import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { GitAccessRefused, remoteAccess, repositoryAccess, hardenedGit } from '../../src/git/access';
import { startGitServer, type GitServer } from '../support/git-server';

// Real git against a real smart-HTTP remote: what a repository (or a command that wrote into its .git) plants must
// never run, and the token must reach only the configured git host.

const run = promisify(execFile);
const token = 'ghs_hardeningtoken0123456789';
let git: GitServer;
let dir: string;

beforeAll(async () => {
  git = await startGitServer(token);
  await git.createRepo('acme', 'widgets', { 'README.md': 'hello\n' });
  dir = await mkdtemp(path.join(os.tmpdir(), 'docent-git-hardening-'));
});

afterAll(async () => {
  await git.close();
  await rm(dir, { recursive: true, force: true });
});

/** A repository whose own .git/config asks git to run a command on every status and commit. */
async function plantedRepo(name: string): Promise<{ repo: string; marker: string }> {
  const repo = path.join(dir, name);
  const marker = path.join(dir, `${name}-ran`);
  await run('git', ['init', '--quiet', repo]);
  await writeFile(path.join(repo, 'a.txt'), 'a\n');
  await mkdir(path.join(repo, 'hooks'));
  await writeFile(path.join(repo, 'hooks', 'pre-commit'), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
  await appendFile(path.join(repo, '.git', 'config'), `[core]\n\tfsmonitor = touch ${marker}; false\n\thooksPath = hooks\n`);
  return { repo, marker };
}

describe('hardened git', () => {
  it('runs neither a planted fsmonitor nor planted hooks, where plain git runs them', async () => {
    const control = await plantedRepo('control');
    await run('git', ['-C', control.repo, 'status', '--porcelain']);
    expect(existsSync(control.marker)).toBe(true);

    const { repo, marker } = await plantedRepo('planted');
    const g = hardenedGit(repo, dir);
    await g.raw(['status', '--porcelain']);
    await g.raw(['add', '--all']);
    await g.raw(['commit', '--quiet', '-m', 'x']);
    expect(existsSync(marker)).toBe(false);
    expect((await g.raw(['log', '--format=%an <%ae>'])).trim()).toBe('docent <docent-agent@users.noreply.github.com>');
  });

  it('packs nothing after a commit, even in a repository that asks for housekeeping at once, where plain git does', async () => {
    /** The packs after a commit in a repository whose config has git pack loose objects in the foreground after each. */
    const packsAfterCommit = async (name: string, commit: (repo: string) => Promise<unknown>) => {
      const repo = path.join(dir, name);
      await run('git', ['init', '--quiet', repo]);
      await appendFile(path.join(repo, '.git', 'config'), '[maintenance]\n\tautoDetach = false\n[maintenance "loose-objects"]\n\tenabled = true\n\tauto = 1\n');
      for (const f of ['a', 'b', 'c']) await writeFile(path.join(repo, `${f}.txt`), `${f}\n`);
      await commit(repo);
      return (await readdir(path.join(repo, '.git', 'objects', 'pack'))).filter((f) => f.endsWith('.pack'));
    };
    const author = ['-c', 'user.name=t', '-c', 'user.email=t@example.com'];
    const plain = await packsAfterCommit('housekeeping-plain', async (repo) => {
      await run('git', ['-C', repo, 'add', '--all']);
      await run('git', ['-C', repo, ...author, 'commit', '--quiet', '-m', 'x']);
    });
    expect(plain).toHaveLength(1);
    const hardened = await packsAfterCommit('housekeeping-hardened', async (repo) => {
      await hardenedGit(repo, dir).raw(['add', '--all']);
      await hardenedGit(repo, dir).raw(['commit', '--quiet', '-m', 'x']);
    });
    expect(hardened).toEqual([]);
  });

  it('reads no global config from HOME', async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), 'docent-home-'));
    const marker = path.join(dir, 'global-ran');
    await writeFile(path.join(home, '.gitconfig'), `[core]\n\tfsmonitor = touch ${marker}; false\n`);
    const saved = process.env.HOME;
    process.env.HOME = home;
    try {
      const { repo } = await plantedRepo('global');
      await hardenedGit(repo, dir).raw(['status', '--porcelain']);
      expect(existsSync(marker)).toBe(false);
    } finally {
      process.env.HOME = saved;
      await rm(home, { recursive: true, force: true });
    }
  });

  it('sends the token to the configured git host only, and never to the same server reached by another name', async () => {
    const opts = { gitBaseUrl: git.url, token, allowPrivateNetworks: ['127.0.0.0/8'] };
    const own = `${git.url}/acme/widgets.git`;
    const home = await remoteAccess(own, opts);
    expect(Object.keys(home.config)).toEqual([`http.${git.url}/.extraHeader`]);
    await hardenedGit(dir, dir, home.config).clone(own, path.join(dir, 'own'));
    expect(existsSync(path.join(dir, 'own', 'README.md'))).toBe(true);

    const before = git.authHeaders.length;
    const other = own.replace('127.0.0.1', 'localhost');
    const elsewhere = await remoteAccess(other, opts);
    expect(JSON.stringify(elsewhere.config)).not.toContain('Basic');
    expect(elsewhere.config['http.curloptResolve']).toMatch(/^localhost:\d+:(127\.0\.0\.1|\[::1\])/);
    await expect(hardenedGit(dir, dir, elsewhere.config).clone(other, path.join(dir, 'other'))).rejects.toThrow(/401|Authentication failed|could not read Username/);
    expect(git.authHeaders.length).toBe(before);
  });

  it('refuses a loopback repository on another host unless an operator allows the network', async () => {
    const other = `${git.url.replace('127.0.0.1', 'localhost')}/acme/widgets.git`;
    await expect(remoteAccess(other, { gitBaseUrl: git.url, token, allowPrivateNetworks: [] })).rejects.toThrow(/loopback address.*DOCENT_ALLOW_PRIVATE_NETWORKS/);
    // What the clone, push, docs sync and gap preview ask: a refusal each maps to its own failure by its reason.
    const refused = repositoryAccess(other, { gitBaseUrl: git.url, token, allowPrivateNetworks: [] });
    await expect(refused).rejects.toBeInstanceOf(GitAccessRefused);
    await expect(refused).rejects.toMatchObject({ reason: 'address', message: expect.stringMatching(/loopback address.*DOCENT_ALLOW_PRIVATE_NETWORKS/) });
  });

  it('fetches no submodule over file://, even when asked to', async () => {
    const secret = path.join(dir, 'secret');
    await run('git', ['init', '--quiet', secret]);
    await writeFile(path.join(secret, 'SECRET.txt'), 'top secret\n');
    await run('git', ['-C', secret, 'add', '--all']);
    await run('git', ['-C', secret, '-c', 'user.name=x', '-c', 'user.email=x@x', 'commit', '--quiet', '-m', 'secret']);
    const sha = (await run('git', ['-C', secret, 'rev-parse', 'HEAD'])).stdout.trim();
    const repo = path.join(dir, 'with-submodule');
    await run('git', ['init', '--quiet', repo]);
    await writeFile(path.join(repo, '.gitmodules'), `[submodule "vendor/secret"]\n\tpath = vendor/secret\n\turl = file://${secret}\n`);
    await run('git', ['-C', repo, 'update-index', '--add', '--cacheinfo', `160000,${sha},vendor/secret`]);
    await expect(hardenedGit(repo, dir).raw(['submodule', 'update', '--init'])).rejects.toThrow(/transport 'file' not allowed/);
    expect(existsSync(path.join(repo, 'vendor', 'secret', 'SECRET.txt'))).toBe(false);
  });
});
