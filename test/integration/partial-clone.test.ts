import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { checkoutClean, workspacePath, type GitDeps } from '../../activities/agent-job/git';
import { startGitServer, type GitServer } from '../support/git-server';

// Issue 12 part 2: a job's clone is partial (no file contents of history), and the contents a checkout needs come
// from the git server with the configured token, which still never lands in the clone's config.

const run = promisify(execFile);
let server: GitServer;
let deps: GitDeps;
const oldContent = 'x'.repeat(256 * 1024);

beforeAll(async () => {
  server = await startGitServer('ghs_partialclonetoken');
  await server.createRepo('acme', 'history', { 'README.md': '# now\n' }, async (work, git) => {
    await writeFile(path.join(work, 'old.bin'), oldContent);
    await git('add', 'old.bin');
    await git('commit', '--quiet', '-m', 'a large file, removed later');
    await git('rm', '--quiet', 'old.bin');
  });
  deps = { gitBaseUrl: server.url, token: server.token, workspaceDir: await mkdtemp(path.join(os.tmpdir(), 'docent-partial-')), allowPrivateNetworks: [] };
});
afterAll(async () => {
  await server?.close();
  await rm(deps.workspaceDir, { recursive: true, force: true });
});

it('clones history without old file contents, and fetches them with the token when an old commit is checked out', async () => {
  const head = (await server.git('acme', 'history', 'rev-parse', 'main')).trim();
  const oldBlob = (await server.git('acme', 'history', 'rev-parse', 'main~1:old.bin')).trim();
  const dir = workspacePath(deps, 'job_partial');

  await checkoutClean(deps, 'job_partial', { repository: 'acme/history' }, head);
  expect(await readFile(path.join(dir, 'README.md'), 'utf8')).toBe('# now\n');
  // `--missing=print` lists objects the clone lacks without fetching them.
  const { stdout } = await run('git', ['-C', dir, 'rev-list', '--objects', '--missing=print', '--all']);
  expect(stdout.split('\n')).toContain(`?${oldBlob}`);

  const authBefore = server.authHeaders.length;
  await checkoutClean(deps, 'job_partial', { repository: 'acme/history' }, `${head}~1`);
  expect(await readFile(path.join(dir, 'old.bin'), 'utf8')).toBe(oldContent);
  expect(server.authHeaders.length).toBeGreaterThan(authBefore);
  expect(await readFile(path.join(dir, '.git', 'config'), 'utf8')).not.toContain(server.token);
});

it('checks out a commit the clone already has without asking the server, and fetches one it lacks', async () => {
  const head = (await server.git('acme', 'history', 'rev-parse', 'main')).trim();
  const dir = workspacePath(deps, 'job_known');
  await checkoutClean(deps, 'job_known', { repository: 'acme/history' }, head);
  await writeFile(path.join(dir, 'left-by-a-command.txt'), 'stray');

  const requestsBefore = server.authHeaders.length;
  await checkoutClean(deps, 'job_known', { repository: 'acme/history' }, head);
  expect(server.authHeaders.length).toBe(requestsBefore);
  await expect(readFile(path.join(dir, 'left-by-a-command.txt'), 'utf8')).rejects.toThrow(/ENOENT/);

  const next = await server.commitFiles('acme', 'history', { 'NEXT.md': 'next\n' });
  await checkoutClean(deps, 'job_known', { repository: 'acme/history' }, next);
  expect(server.authHeaders.length).toBeGreaterThan(requestsBefore);
  expect(await readFile(path.join(dir, 'NEXT.md'), 'utf8')).toBe('next\n');
});

it('puts the tree back at the commit after a step that died between `git add` and its commit', async () => {
  const head = await server.commitFiles('acme', 'history', { 'KEEP.md': 'keep\n' });
  const dir = workspacePath(deps, 'job_staged');
  await checkoutClean(deps, 'job_staged', { repository: 'acme/history' }, head);
  // What an attempt of commitAndPush leaves when its worker dies after `git add --all`: a new, a changed and a
  // deleted file, all staged.
  await writeFile(path.join(dir, 'staged-new.txt'), 'new');
  await writeFile(path.join(dir, 'README.md'), '# changed\n');
  await rm(path.join(dir, 'KEEP.md'));
  await run('git', ['-C', dir, 'add', '--all']);

  await checkoutClean(deps, 'job_staged', { repository: 'acme/history' }, head);
  expect(await readFile(path.join(dir, 'README.md'), 'utf8')).toBe('# now\n');
  expect(await readFile(path.join(dir, 'KEEP.md'), 'utf8')).toBe('keep\n');
  await expect(readFile(path.join(dir, 'staged-new.txt'), 'utf8')).rejects.toThrow(/ENOENT/);
  expect((await run('git', ['-C', dir, 'status', '--porcelain', '--untracked-files=all'])).stdout).toBe('');
  expect((await run('git', ['-C', dir, 'rev-parse', 'HEAD'])).stdout.trim()).toBe(head);
});
