import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, lstat, mkdir, mkdtemp, open, readFile, readlink, rm, stat, symlink, writeFile, type FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CloneFs, PathRefused } from '../../activities/agent-job/clone-fs';

let base: string;
let root: string;
let outside: string;
let clone: CloneFs;

beforeEach(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'clone-fs-'));
  root = path.join(base, 'clone');
  outside = path.join(base, 'outside');
  await mkdir(path.join(root, '.git'), { recursive: true });
  await writeFile(path.join(root, '.git', 'config'), '[core]\n');
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.txt'), 'host secret');
  clone = new CloneFs(root);
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (err: unknown) => {
      expect(err).toBeInstanceOf(PathRefused);
      return (err as Error).message;
    },
  );
const modeOf = async (rel: string) => (await stat(path.join(root, rel))).mode & 0o777;

describe('CloneFs on plain files', () => {
  it('writes, reads and replaces files, creating missing folders', async () => {
    await clone.writeFile('a/b/c.txt', 'hello');
    expect((await clone.readFile('a/b/c.txt', 100)).toString()).toBe('hello');
    await clone.writeFile('a/b/c.txt', Buffer.from('hi'));
    expect(await readFile(path.join(root, 'a/b/c.txt'), 'utf8')).toBe('hi');
    expect((await lstat(path.join(root, 'a/b'))).isDirectory()).toBe(true);
  });

  it('gives new files 0644, executable ones 0755, and leaves an existing file its mode', async () => {
    await clone.writeFile('plain.sh', 'x');
    expect(await modeOf('plain.sh')).toBe(0o644);
    await clone.writeFile('run.sh', 'x', { executable: true });
    expect(await modeOf('run.sh')).toBe(0o755);
    await chmod(path.join(root, 'plain.sh'), 0o700);
    await clone.writeFile('plain.sh', 'y');
    expect(await modeOf('plain.sh')).toBe(0o700);
    await clone.writeFile('plain.sh', 'z', { executable: true });
    expect(await modeOf('plain.sh')).toBe(0o755);
  });

  it('caps reads and reports missing files and folders as Node errors', async () => {
    await writeFile(path.join(root, 'big.txt'), 'x'.repeat(101));
    expect(await refusal(clone.readFile('big.txt', 100))).toBe('file is larger than 100 bytes');
    await expect(clone.readFile('missing.txt', 100)).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(clone.readFile('no/such/dir.txt', 100)).rejects.toMatchObject({ code: 'ENOENT' });
    await mkdir(path.join(root, 'folder'));
    await expect(clone.readFile('folder', 100)).rejects.toMatchObject({ code: 'EISDIR' });
  });

  it('does not hang on a FIFO', async () => {
    execFileSync('mkfifo', [path.join(root, 'pipe')]);
    await expect(clone.readFile('pipe', 100)).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(clone.writeFile('pipe', 'x')).rejects.toMatchObject({ code: 'ENXIO' });
  });

  it('removes files and refuses folders', async () => {
    await clone.writeFile('gone.txt', 'x');
    await clone.removeFile('gone.txt');
    expect(existsSync(path.join(root, 'gone.txt'))).toBe(false);
    await expect(clone.removeFile('gone.txt')).rejects.toMatchObject({ code: 'ENOENT' });
    await mkdir(path.join(root, 'folder'));
    await expect(clone.removeFile('folder')).rejects.toMatchObject({ code: 'EISDIR' });
    expect(existsSync(path.join(root, 'folder'))).toBe(true);
  });
});

describe('CloneFs path rules', () => {
  const refusedPaths: Array<[string, string]> = [
    ['/etc/passwd', 'use a path relative to the repository root'],
    ['../x', 'path "../x" is outside the repository'],
    ['a/../../x', 'path "a/../../x" is outside the repository'],
    ['.', 'path "." is outside the repository'],
    ['', 'path must be 1-1024 characters'],
    ['x'.repeat(1025), 'path must be 1-1024 characters'],
    ['a\0b', 'path must not contain NUL characters'],
    ['.git/config', 'the .git folder is off limits'],
    ['.GIT/config', 'the .git folder is off limits'],
    ['sub/.Git/hooks/x', 'the .git folder is off limits'],
    ['a/../.git/config', 'the .git folder is off limits'],
  ];
  it.each(refusedPaths.map(([rel, message]) => [JSON.stringify(rel).slice(0, 40), rel, message]))('refuses %s', async (_title, rel, message) => {
    expect(await refusal(clone.writeFile(rel, 'x'))).toBe(message);
    expect(await refusal(clone.readFile(rel, 100))).toBe(message);
    expect(await refusal(clone.removeFile(rel))).toBe(message);
    expect(await refusal(clone.inspect(rel))).toBe(message);
  });

  it('normalises harmless dots', async () => {
    await clone.writeFile('./a//b/../c.txt', 'x');
    expect(await readFile(path.join(root, 'a/c.txt'), 'utf8')).toBe('x');
  });
});

describe('CloneFs and symlinks out of the clone', () => {
  it('refuses a file linked to an absolute path outside, in every direction', async () => {
    const victim = path.join(outside, 'created-by-worker');
    await symlink(victim, path.join(root, 'note.md'));
    expect(await refusal(clone.writeFile('note.md', 'pwned'))).toBe('path "note.md" leads outside the repository');
    expect(existsSync(victim)).toBe(false);
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'leak.md'));
    expect(await refusal(clone.readFile('leak.md', 1000))).toBe('path "leak.md" leads outside the repository');
  });

  it.each([
    ['an absolute', () => outside],
    ['a relative', () => '../outside'],
  ])('refuses a folder linked to %s path outside', async (_kind, target) => {
    await symlink(target(), path.join(root, 'out'));
    expect(await refusal(clone.writeFile('out/x', 'pwned'))).toBe('path "out/x" leads outside the repository');
    expect(await refusal(clone.writeFile('out/new/deep/x', 'pwned'))).toBe('path "out/new/deep/x" leads outside the repository');
    expect(await refusal(clone.readFile('out/secret.txt', 1000))).toBe('path "out/secret.txt" leads outside the repository');
    expect(await refusal(clone.listFiles('out', 10))).toBe('path "out" leads outside the repository');
    expect(await refusal(clone.removeFile('out/secret.txt'))).toBe('path "out/secret.txt" leads outside the repository');
    expect(await refusal(clone.createSymlink('out/l', '/etc'))).toBe('path "out/l" leads outside the repository');
    expect(await refusal(clone.inspect('out/secret.txt'))).toBe('path "out/secret.txt" leads outside the repository');
    expect(existsSync(path.join(outside, 'x'))).toBe(false);
    expect(existsSync(path.join(outside, 'new'))).toBe(false);
    expect(existsSync(path.join(outside, 'secret.txt'))).toBe(true);
  });

  it('refuses a link that climbs to / with ../../..', async () => {
    await mkdir(path.join(root, 'deep'));
    await symlink('../../..', path.join(root, 'deep', 'up'));
    const throughRoot = `deep/up${outside}/x`;
    expect(await refusal(clone.writeFile(throughRoot, 'pwned'))).toBe(`path "${throughRoot}" leads outside the repository`);
    expect(existsSync(path.join(outside, 'x'))).toBe(false);
  });

  it('refuses a link whose own target sits inside but goes through one that leads out', async () => {
    await symlink(outside, path.join(root, 'out'));
    await symlink('out/secret.txt', path.join(root, 'hop'));
    expect(await refusal(clone.readFile('hop', 1000))).toBe('path "hop" leads outside the repository');
  });

  it('refuses a symlink loop cleanly', async () => {
    await symlink('b', path.join(root, 'a'));
    await symlink('a', path.join(root, 'b'));
    await symlink('self', path.join(root, 'self'));
    expect(await refusal(clone.readFile('a', 100))).toBe('path "a" goes through too many symbolic links');
    expect(await refusal(clone.readFile('self/x', 100))).toBe('path "self/x" goes through too many symbolic links');
    expect(await refusal(clone.writeFile('a/x', 'y'))).toBe('path "a/x" goes through too many symbolic links');
  });
});

describe('CloneFs and the .git folder', () => {
  it.each([
    ['a relative link', () => '.git'],
    ['an upper-case link', () => '.GIT'],
    ['an absolute link', () => path.join(root, '.git')],
  ])('refuses reaching .git through %s', async (_kind, target) => {
    await symlink(target(), path.join(root, 'gitdir'));
    const fsmonitor = '[core]\n\tfsmonitor = touch /tmp/pwned\n';
    expect(await refusal(clone.writeFile('gitdir/config', fsmonitor))).toBe('the .git folder is off limits');
    expect(await refusal(clone.readFile('gitdir/config', 1000))).toBe('the .git folder is off limits');
    expect(await refusal(clone.listFiles('gitdir', 10))).toBe('the .git folder is off limits');
    expect(await readFile(path.join(root, '.git', 'config'), 'utf8')).toBe('[core]\n');
  });

  it('refuses a file linked to .git/config', async () => {
    await symlink('.git/config', path.join(root, 'cfg'));
    expect(await refusal(clone.readFile('cfg', 1000))).toBe('the .git folder is off limits');
    expect(await refusal(clone.writeFile('cfg', 'x'))).toBe('the .git folder is off limits');
  });
});

describe('CloneFs and symlinks inside the clone', () => {
  it('follows an in-clone folder link for reading', async () => {
    await mkdir(path.join(root, 'documentation'));
    await writeFile(path.join(root, 'documentation', 'a.md'), 'docs');
    await symlink('documentation', path.join(root, 'docs'));
    await symlink(path.join(root, 'documentation'), path.join(root, 'abs-docs'));
    expect((await clone.readFile('docs/a.md', 100)).toString()).toBe('docs');
    expect((await clone.readFile('abs-docs/a.md', 100)).toString()).toBe('docs');
    await clone.writeFile('docs/b.md', 'through a folder link');
    expect(await readFile(path.join(root, 'documentation', 'b.md'), 'utf8')).toBe('through a folder link');
  });

  it('caps the real file, not the tiny link', async () => {
    await writeFile(path.join(root, 'big.bin'), Buffer.alloc(4096));
    await symlink('big.bin', path.join(root, 'small-link'));
    expect(await refusal(clone.readFile('small-link', 1000))).toBe('file is larger than 1000 bytes');
  });

  it('refuses to write through a final link and names its target', async () => {
    await mkdir(path.join(root, 'documentation'));
    await writeFile(path.join(root, 'documentation', 'a.md'), 'docs');
    await symlink('documentation/a.md', path.join(root, 'README.md'));
    expect(await refusal(clone.writeFile('README.md', 'x'))).toBe('path "README.md" is a symbolic link to "documentation/a.md"; write "documentation/a.md" instead');
    expect(await readFile(path.join(root, 'documentation', 'a.md'), 'utf8')).toBe('docs');
  });

  it('removes a link itself, never its target', async () => {
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'leak'));
    await clone.removeFile('leak');
    expect(existsSync(path.join(root, 'leak'))).toBe(false);
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('host secret');
  });

  it('creates and replaces symlinks with the target stored as-is', async () => {
    await clone.createSymlink('tools/link', '../../anywhere');
    expect(await readlink(path.join(root, 'tools/link'))).toBe('../../anywhere');
    await clone.writeFile('file', 'x');
    await clone.createSymlink('file', 'tools');
    expect(await readlink(path.join(root, 'file'))).toBe('tools');
    await expect(clone.createSymlink('tools', 'x')).rejects.toMatchObject({ code: 'EISDIR' });
  });
});

describe('CloneFs.listFiles', () => {
  beforeEach(async () => {
    await mkdir(path.join(root, 'src/deep'), { recursive: true });
    await writeFile(path.join(root, 'src/b.ts'), '');
    await writeFile(path.join(root, 'src/a.ts'), '');
    await writeFile(path.join(root, 'src/deep/c.ts'), '');
    await writeFile(path.join(root, 'top.md'), '');
    await mkdir(path.join(root, 'sub/.GIT'), { recursive: true });
    await writeFile(path.join(root, 'sub/.GIT/HEAD'), '');
    await symlink(outside, path.join(root, 'out'));
    await symlink('src', path.join(root, 'src-link'));
    await symlink('top.md', path.join(root, 'top-link.md'));
  });

  it('lists regular files only, sorted, without .git or links', async () => {
    expect(await clone.listFiles(undefined, 100)).toEqual(['src/a.ts', 'src/b.ts', 'src/deep/c.ts', 'top.md']);
    expect(await clone.listFiles('.', 100)).toEqual(['src/a.ts', 'src/b.ts', 'src/deep/c.ts', 'top.md']);
  });

  it('lists a folder and stops at the cap', async () => {
    expect(await clone.listFiles('src', 100)).toEqual(['src/a.ts', 'src/b.ts', 'src/deep/c.ts']);
    expect(await clone.listFiles(undefined, 2)).toHaveLength(2);
  });

  it('resolves a folder link inside the clone to the real folder', async () => {
    expect(await clone.listFiles('src-link/deep', 100)).toEqual(['src/deep/c.ts']);
  });

  it('refuses .git and reports a missing folder', async () => {
    expect(await refusal(clone.listFiles('.git', 100))).toBe('the .git folder is off limits');
    await expect(clone.listFiles('nowhere', 100)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('CloneFs.inspect', () => {
  it('reports files, links, folders and absence without following the last component', async () => {
    await writeFile(path.join(root, 'data.bin'), Buffer.from([0, 1, 2]));
    await writeFile(path.join(root, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 });
    await mkdir(path.join(root, 'folder'));
    await symlink('/etc/passwd', path.join(root, 'link'));
    expect(await clone.inspect('data.bin')).toEqual({ kind: 'file', bytes: Buffer.from([0, 1, 2]), executable: false });
    expect(await clone.inspect('run.sh')).toEqual({ kind: 'file', bytes: Buffer.from('#!/bin/sh\n'), executable: true });
    expect(await clone.inspect('link')).toEqual({ kind: 'symlink', target: '/etc/passwd' });
    expect(await clone.inspect('folder')).toEqual({ kind: 'other' });
    expect(await clone.inspect('absent')).toBeNull();
    expect(await clone.inspect('absent/deeper')).toBeNull();
    expect(await clone.inspect('data.bin/deeper')).toBeNull();
  });
});

describe('CloneFs owner', () => {
  it('gives created files, folders and links to the owner and leaves existing files alone', async () => {
    const owned = new CloneFs(root, { owner: { uid: 61000, gid: 61000 } });
    await writeFile(path.join(root, 'existing.txt'), 'x');
    await owned.writeFile('new/folder/file.txt', 'x');
    await owned.writeFile('existing.txt', 'y');
    await owned.createSymlink('new/link', 'file.txt');
    for (const rel of ['new', 'new/folder', 'new/folder/file.txt']) expect((await stat(path.join(root, rel))).uid).toBe(61000);
    expect((await lstat(path.join(root, 'new/link'))).uid).toBe(61000);
    expect((await stat(path.join(root, 'new/folder'))).gid).toBe(61000);
    expect((await stat(path.join(root, 'existing.txt'))).uid).toBe(process.getuid?.());
  });
});

describe('CloneFs against a component swapped after the check', () => {
  type Internals = {
    locate(rel: string, followLast: boolean): Promise<{ parts: string[] }>;
    openFile(parts: string[], rel: string, flags: number): Promise<FileHandle>;
    openFolder(parts: string[], rel: string, create: boolean): Promise<FileHandle>;
    verifyOpened(handle: FileHandle, parts: string[], rel: string): Promise<void>;
  };
  const internals = () => clone as unknown as Internals;
  const swapForLinkOutside = async (folder: string) => {
    await rm(path.join(root, folder), { recursive: true });
    await symlink(outside, path.join(root, folder));
  };

  it('refuses to open a file once its folder became a link', async () => {
    await mkdir(path.join(root, 'sub'));
    await writeFile(path.join(root, 'sub/secret.txt'), 'inside');
    const { parts } = await internals().locate('sub/secret.txt', true);
    await swapForLinkOutside('sub');
    const message = await refusal(internals().openFile(parts, 'sub/secret.txt', 0));
    expect(message).toBe('path "sub/secret.txt" changed while it was being opened; try again');
  });

  it('refuses to create a file once its folder became a link', async () => {
    await mkdir(path.join(root, 'sub'));
    const { parts } = await internals().locate('sub/x', false);
    await swapForLinkOutside('sub');
    await refusal(internals().openFolder(parts.slice(0, -1), 'sub/x', true));
    expect(existsSync(path.join(outside, 'x'))).toBe(false);
  });

  it('refuses a descriptor whose real path is not the resolved one', async () => {
    await writeFile(path.join(root, 'note.md'), 'inside');
    const handle = await open(path.join(outside, 'secret.txt'), 'r');
    try {
      await refusal(internals().verifyOpened(handle, ['note.md'], 'note.md'));
    } finally {
      await handle.close();
    }
  });
});
