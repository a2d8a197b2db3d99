// Opens the directories bwrap binds, in the worker, and hands them over as inherited file descriptors.
//
// bwrap 0.8.0 resolves a --bind-fd source with realpath(/proc/self/fd/N) and then checks that what it mounted is
// the same inode as the fd: this pins the mount to the directory opened here (no symlink swap between our check
// and bwrap's mount), but it does NOT lift the need for search permission: the uid bwrap runs as (runAs) must be
// able to traverse every parent of workspace and home (mode 0711 or wider on each parent directory).
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { unavailable } from './errors';

export interface BindSources {
  workspace: FileHandle;
  home: FileHandle;
  /** The workspace's .git, only when it is a real directory (never followed through a symlink). */
  git?: FileHandle;
  close(): Promise<void>;
}

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY;

async function openDir(what: string, p: string): Promise<FileHandle> {
  try {
    return await open(p, DIR_FLAGS);
  } catch (err) {
    throw unavailable(`cannot open the ${what} directory ${p}`, (err as Error).message);
  }
}

export async function openBindSources(workspace: string, home: string): Promise<BindSources> {
  const opened: FileHandle[] = [];
  const close = async () => {
    await Promise.all(opened.map((h) => h.close().catch(() => undefined)));
  };
  try {
    const ws = await openDir('workspace', workspace);
    opened.push(ws);
    const hm = await openDir('home', home);
    opened.push(hm);
    let git: FileHandle | undefined;
    try {
      git = await open(path.join(workspace, '.git'), DIR_FLAGS | constants.O_NOFOLLOW);
      opened.push(git);
    } catch (err) {
      // No .git, a .git file (worktree) or a symlink: nothing to protect here. Anything else must not leave it writable.
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR' && code !== 'ELOOP') throw unavailable(`cannot open ${path.join(workspace, '.git')} to bind it read-only`, (err as Error).message);
    }
    return { workspace: ws, home: hm, git, close };
  } catch (err) {
    await close();
    throw err;
  }
}
