import { existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { workspaceTools, type ToolLimits } from '../../activities/agent-job/workspace-tools';

const limits: ToolLimits = { maxReadBytes: 1000, maxWriteBytes: 2000 };
const fsmonitorConfig = '[core]\n\tfsmonitor = "touch /tmp/docent-pwned"\n';

let base: string;
let root: string;
let outside: string;
let tools: ReturnType<typeof workspaceTools>;
const results: unknown[] = [];

beforeEach(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'workspace-tools-'));
  root = path.join(base, 'clone');
  outside = path.join(base, 'outside');
  await mkdir(path.join(root, '.git'), { recursive: true });
  await writeFile(path.join(root, '.git', 'config'), '[core]\n\tneedle = in git\n');
  await writeFile(path.join(root, 'README.md'), 'hello needle\n');
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.txt'), 'host secret needle');
  tools = workspaceTools(root, limits);
});
afterEach(async () => {
  // Whatever the model was told, no host path and no stack trace may be in it.
  for (const result of results.splice(0)) {
    expect(JSON.stringify(result)).not.toContain(base);
    expect(JSON.stringify(result)).not.toMatch(/\bat \S+ \(|ENOENT|EISDIR|ELOOP/);
  }
  await rm(base, { recursive: true, force: true });
});

/** Runs a tool as the model's tool call would and keeps the answer for the leak check. */
async function run(name: keyof typeof tools, input: object): Promise<Record<string, unknown>> {
  const execute = (tools[name] as unknown as { execute: (input: object, options: object) => Promise<Record<string, unknown>> }).execute;
  const result = await execute(input, { toolCallId: 'test', messages: [], context: {} });
  results.push(result);
  return result;
}

describe('workspace tools on ordinary files', () => {
  it('writes, reads, edits, lists, searches and deletes', async () => {
    expect(await run('write_file', { path: 'src/a.ts', content: 'const a = 1;\n' })).toEqual({ written: 'src/a.ts' });
    expect(await run('edit_file', { path: 'src/a.ts', old: '1', new: '2' })).toEqual({ edited: 'src/a.ts' });
    expect(await run('read_file', { path: 'src/a.ts' })).toEqual({ content: 'const a = 2;\n' });
    expect(await run('list_files', {})).toEqual({ files: ['README.md', 'src/a.ts'] });
    expect(await run('list_files', { folder: 'src' })).toEqual({ files: ['src/a.ts'] });
    expect(await run('search_files', { text: 'NEEDLE' })).toEqual({ matches: [{ path: 'README.md', line: 1, text: 'hello needle' }] });
    expect(await run('delete_file', { path: 'src/a.ts' })).toEqual({ deleted: 'src/a.ts' });
    expect(existsSync(path.join(root, 'src/a.ts'))).toBe(false);
  });

  it('keeps the familiar messages for missing files and plain escapes', async () => {
    expect(await run('read_file', { path: 'missing.md' })).toEqual({ error: 'cannot read missing.md: no such file' });
    expect(await run('edit_file', { path: 'missing.md', old: 'a', new: 'b' })).toEqual({ error: 'cannot edit missing.md: no such file' });
    expect(await run('delete_file', { path: 'missing.md' })).toEqual({ error: 'cannot delete missing.md: no such file' });
    expect(await run('write_file', { path: '../../etc/evil', content: 'x' })).toEqual({ error: 'path "../../etc/evil" is outside the repository' });
    expect(await run('write_file', { path: '/etc/evil', content: 'x' })).toEqual({ error: 'use a path relative to the repository root' });
    expect(await run('list_files', { folder: 'nowhere' })).toEqual({ error: 'the operation failed' });
  });

  it('caps what is written', async () => {
    expect(await run('write_file', { path: 'big.txt', content: 'x'.repeat(2001) })).toEqual({ error: 'content is larger than 2000 bytes' });
    await writeFile(path.join(root, 'grow.txt'), 'a'.repeat(900));
    expect(await run('edit_file', { path: 'grow.txt', old: 'a'.repeat(900), new: 'b'.repeat(2001) })).toEqual({ error: 'result is larger than 2000 bytes' });
  });
});

describe('workspace tools and a symlink out of the clone', () => {
  it('refuses writing, editing and reading a note linked outside', async () => {
    const victim = path.join(outside, `victim-${process.pid}`);
    await symlink(victim, path.join(root, 'ACCEPTANCE_NOTE.md'));
    const refused = { error: 'path "ACCEPTANCE_NOTE.md" leads outside the repository' };
    expect(await run('write_file', { path: 'ACCEPTANCE_NOTE.md', content: 'pwned' })).toEqual(refused);
    expect(await run('edit_file', { path: 'ACCEPTANCE_NOTE.md', old: 'a', new: 'b' })).toEqual(refused);
    expect(existsSync(victim)).toBe(false);
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'leak.md'));
    expect(await run('read_file', { path: 'leak.md' })).toEqual({ error: 'path "leak.md" leads outside the repository' });
    expect(await run('edit_file', { path: 'leak.md', old: 'host', new: 'pwned' })).toEqual({ error: 'path "leak.md" leads outside the repository' });
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('host secret needle');
  });

  it.each([
    ['absolute', () => outside],
    ['relative', () => '../outside'],
  ])('refuses writing into a folder linked outside (%s target)', async (_kind, target) => {
    await symlink(target(), path.join(root, 'out'));
    expect(await run('write_file', { path: 'out/x', content: 'pwned' })).toEqual({ error: 'path "out/x" leads outside the repository' });
    expect(await run('read_file', { path: 'out/secret.txt' })).toEqual({ error: 'path "out/secret.txt" leads outside the repository' });
    expect(await run('delete_file', { path: 'out/secret.txt' })).toEqual({ error: 'path "out/secret.txt" leads outside the repository' });
    expect(await run('list_files', { folder: 'out' })).toEqual({ error: 'path "out" leads outside the repository' });
    expect(existsSync(path.join(outside, 'x'))).toBe(false);
    expect(existsSync(path.join(outside, 'secret.txt'))).toBe(true);
  });

  it('refuses a link that climbs to / through ../../..', async () => {
    await mkdir(path.join(root, 'a'));
    await symlink('../../..', path.join(root, 'a', 'up'));
    const viaRoot = `a/up${outside}/x`;
    expect(await run('write_file', { path: viaRoot, content: 'pwned' })).toEqual({ error: `path "${viaRoot}" leads outside the repository` });
    expect(existsSync(path.join(outside, 'x'))).toBe(false);
    results.pop(); // the message repeats the model's own path, which happens to contain the temp folder
  });

  it('does not search or list through links', async () => {
    await symlink(outside, path.join(root, 'out'));
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'secret-link.txt'));
    expect(await run('list_files', {})).toEqual({ files: ['README.md'] });
    expect(await run('search_files', { text: 'needle' })).toEqual({ matches: [{ path: 'README.md', line: 1, text: 'hello needle' }] });
  });
});

describe('workspace tools and the .git folder', () => {
  it('refuses writing git config through gitdir -> .git', async () => {
    await symlink('.git', path.join(root, 'gitdir'));
    const refused = { error: 'the .git folder is off limits' };
    expect(await run('write_file', { path: 'gitdir/config', content: fsmonitorConfig })).toEqual(refused);
    expect(await run('edit_file', { path: 'gitdir/config', old: 'needle', new: 'x' })).toEqual(refused);
    expect(await run('read_file', { path: 'gitdir/config' })).toEqual(refused);
    expect(await run('list_files', { folder: 'gitdir' })).toEqual(refused);
    expect(await run('delete_file', { path: 'gitdir/config' })).toEqual(refused);
    expect(await run('write_file', { path: '.GIT/config', content: fsmonitorConfig })).toEqual(refused);
    expect(await readFile(path.join(root, '.git', 'config'), 'utf8')).toBe('[core]\n\tneedle = in git\n');
  });

  it('never lists or searches .git', async () => {
    expect(await run('list_files', {})).toEqual({ files: ['README.md'] });
    expect(await run('search_files', { text: 'in git' })).toEqual({ matches: [] });
  });
});

describe('workspace tools and symlinks inside the clone', () => {
  beforeEach(async () => {
    await mkdir(path.join(root, 'documentation'));
    await writeFile(path.join(root, 'documentation', 'a.md'), 'docs needle\n');
    await symlink('documentation', path.join(root, 'docs'));
  });

  it('reads through an in-clone folder link', async () => {
    expect(await run('read_file', { path: 'docs/a.md' })).toEqual({ content: 'docs needle\n' });
    expect(await run('edit_file', { path: 'docs/a.md', old: 'docs', new: 'guide' })).toEqual({ edited: 'docs/a.md' });
    expect(await readFile(path.join(root, 'documentation', 'a.md'), 'utf8')).toBe('guide needle\n');
  });

  it('refuses writing through a final link and names the file to write instead', async () => {
    await symlink('documentation/a.md', path.join(root, 'GUIDE.md'));
    const refused = { error: 'path "GUIDE.md" is a symbolic link to "documentation/a.md"; write "documentation/a.md" instead' };
    expect(await run('write_file', { path: 'GUIDE.md', content: 'x' })).toEqual(refused);
    expect(await run('edit_file', { path: 'GUIDE.md', old: 'docs', new: 'x' })).toEqual(refused);
    expect(await readFile(path.join(root, 'documentation', 'a.md'), 'utf8')).toBe('docs needle\n');
  });

  it('applies the read cap to the real file behind a tiny link', async () => {
    await writeFile(path.join(root, 'huge.txt'), 'y'.repeat(5000));
    await symlink('huge.txt', path.join(root, 'tiny-link.txt'));
    expect((await lstat(path.join(root, 'tiny-link.txt'))).size).toBeLessThan(limits.maxReadBytes);
    expect(await run('read_file', { path: 'tiny-link.txt' })).toEqual({ error: 'file is larger than 1000 bytes' });
    expect(await run('edit_file', { path: 'tiny-link.txt', old: 'y', new: 'z' })).toEqual({ error: 'file is larger than 1000 bytes' });
    expect(await run('edit_file', { path: 'huge.txt', old: 'y', new: 'z' })).toEqual({ error: 'file is larger than 1000 bytes' });
  });

  it('refuses a symlink loop cleanly', async () => {
    await symlink('b', path.join(root, 'a'));
    await symlink('a', path.join(root, 'b'));
    expect(await run('read_file', { path: 'a' })).toEqual({ error: 'path "a" goes through too many symbolic links' });
    expect(await run('write_file', { path: 'a/x', content: 'y' })).toEqual({ error: 'path "a/x" goes through too many symbolic links' });
  });

  it('deletes a link, not what it points to', async () => {
    expect(await run('delete_file', { path: 'docs' })).toEqual({ deleted: 'docs' });
    expect(existsSync(path.join(root, 'documentation', 'a.md'))).toBe(true);
  });

  it('lists the real folder only once and skips files it cannot read when searching', async () => {
    await writeFile(path.join(root, 'large.txt'), `needle ${'z'.repeat(2000)}`);
    expect(await run('list_files', {})).toEqual({ files: ['README.md', 'documentation/a.md', 'large.txt'] });
    const { matches } = (await run('search_files', { text: 'needle' })) as { matches: Array<{ path: string }> };
    expect(matches.map((m) => m.path)).toEqual(['README.md', 'documentation/a.md']);
  });
});

describe('workspace tools with an owner', () => {
  it('gives what the model creates to the sandbox user', async () => {
    tools = workspaceTools(root, limits, { uid: 61000, gid: 61000 });
    expect(await run('write_file', { path: 'new/dir/file.ts', content: 'x' })).toEqual({ written: 'new/dir/file.ts' });
    for (const rel of ['new', 'new/dir', 'new/dir/file.ts']) expect((await stat(path.join(root, rel))).uid).toBe(61000);
  });
});
