import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, readdir, readlink, realpath, symlink, unlink, lchown, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = constants;

/** Linux's own limit on links followed in one lookup. */
const maxLinks = 40;
const maxPathLength = 1024;
const readChunkBytes = 64 * 1024;
const folderFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
// O_NONBLOCK so that a FIFO never hangs the worker: open returns at once and fstat then shows it is no regular file.
const readFlags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;
const writeFlags = O_WRONLY | O_NOFOLLOW | O_NONBLOCK;

/** A path the model or the repository asked for that leads outside the clone or into .git; the message is safe to show the model. */
export class PathRefused extends Error {}

/** Who files created in the clone should belong to (the sandbox's uid when the worker runs as root). */
export interface FileOwner {
  uid: number;
  gid: number;
}

export type CloneEntry = { kind: 'file'; bytes: Buffer; executable: boolean } | { kind: 'symlink'; target: string } | { kind: 'other' };

/** Components of a path below the real root, none of them empty, `.` or `..`. */
type Parts = string[];

interface Located {
  /** The path with every symlink it passes through replaced by where the link points. */
  parts: Parts;
  /** What is at the last component, not followed; null when it or a parent folder is missing. */
  last: Stats | null;
}

type WalkStep = { located: Located } | { link: { folder: Parts; target: string; rest: Parts } };

const isGitName = (name: string) => name.toLowerCase() === '.git';
const errorCode = (err: unknown) => (err as NodeJS.ErrnoException | null)?.code;
const nodeError = (code: string, message: string) => Object.assign(new Error(`${code}: ${message}`), { code });
/** The kernel resolves this magic link to the folder the descriptor holds, so names below it behave like openat(2). */
const under = (folder: FileHandle, name: string) => `/proc/self/fd/${folder.fd}/${name}`;
const changedWhileOpening = (requested: string) => new PathRefused(`path "${requested}" changed while it was being opened; try again`);

/** Splits a caller's path into components below the root, refusing absolute paths, climbs out and .git. */
function requestedParts(requested: unknown): Parts {
  if (typeof requested !== 'string' || requested.length === 0 || requested.length > maxPathLength) {
    throw new PathRefused(`path must be 1-${maxPathLength} characters`);
  }
  if (requested.includes('\0')) throw new PathRefused('path must not contain NUL characters');
  if (requested.startsWith('/')) throw new PathRefused('use a path relative to the repository root');
  const normal = path.posix.normalize(requested);
  if (normal === '..' || normal.startsWith('../')) throw new PathRefused(`path "${requested}" is outside the repository`);
  return checkedParts(normal);
}

function checkedParts(normal: string): Parts {
  const parts = normal.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.some(isGitName)) throw new PathRefused('the .git folder is off limits');
  return parts;
}

/** The name of the file the path ends in; the root itself is no file. */
function fileName(parts: Parts, requested: string): string {
  const name = parts.at(-1);
  if (name === undefined) throw new PathRefused(`path "${requested}" is outside the repository`);
  return name;
}

async function lstatIfPresent(at: string): Promise<Stats | null> {
  try {
    return await lstat(at);
  } catch (err) {
    if (errorCode(err) === 'ENOENT' || errorCode(err) === 'ENOTDIR') return null;
    throw err;
  }
}

/** Reads to the end of the file, refusing once more than maxBytes arrive (the file may grow after fstat). */
async function readCapped(handle: FileHandle, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.alloc(Math.min(readChunkBytes, maxBytes + 1 - total));
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
    if (bytesRead === 0) return Buffer.concat(chunks, total);
    chunks.push(chunk.subarray(0, bytesRead));
    total += bytesRead;
    if (total > maxBytes) throw new PathRefused(`file is larger than ${maxBytes} bytes`);
  }
}

async function requireRegularFile(handle: FileHandle): Promise<Stats> {
  const info = await handle.stat();
  if (info.isDirectory()) throw nodeError('EISDIR', 'is a folder');
  if (!info.isFile()) throw nodeError('EINVAL', 'is not a regular file');
  return info;
}

/** File access confined to one clone: no path, symlink or race leads outside it or into its .git folder. */
export class CloneFs {
  private readonly owner: FileOwner | undefined;
  private realRootPromise: Promise<string> | undefined;

  constructor(
    private readonly root: string,
    opts: { owner?: FileOwner } = {},
  ) {
    this.owner = opts.owner;
  }

  /** Reads a regular file; in-clone symlinks are followed, the size cap applies to the real file. */
  async readFile(rel: string, maxBytes: number): Promise<Buffer> {
    return this.withRegularFile(rel, async (handle, info) => {
      if (info.size > maxBytes) throw new PathRefused(`file is larger than ${maxBytes} bytes`);
      return readCapped(handle, maxBytes);
    });
  }

  /** The first maxBytes of a regular file and its whole size, for a file shown in part however large it is. */
  async readHead(rel: string, maxBytes: number): Promise<{ bytes: Buffer; size: number }> {
    return this.withRegularFile(rel, async (handle, info) => {
      const head = Buffer.alloc(Math.min(maxBytes, info.size));
      const { bytesRead } = await handle.read(head, 0, head.length, 0);
      return { bytes: head.subarray(0, bytesRead), size: info.size };
    });
  }

  /** Opens rel as readFile does (in-clone symlinks followed) and gives it to `use` once it is known to be a regular file. */
  private async withRegularFile<T>(rel: string, use: (handle: FileHandle, info: Stats) => Promise<T>): Promise<T> {
    const { parts } = await this.locate(rel, true);
    const handle = await this.openFile(parts, rel, readFlags);
    try {
      return await use(handle, await requireRegularFile(handle));
    } finally {
      await handle.close();
    }
  }

  /** Creates or replaces a regular file, never through a symlink. */
  async writeFile(rel: string, data: string | Buffer, opts: { executable?: boolean } = {}): Promise<void> {
    const { parts, last } = await this.locate(rel, false);
    const name = fileName(parts, rel);
    if (last?.isSymbolicLink()) throw await this.writeThroughLinkRefusal(rel);
    const folder = await this.openFolder(parts.slice(0, -1), rel, true);
    try {
      const { handle, created } = await this.openForWriting(folder, name, parts, rel);
      try {
        await requireRegularFile(handle);
        if (!created) await handle.truncate(0);
        await handle.writeFile(data);
        if (created || opts.executable) await handle.chmod(opts.executable ? 0o755 : 0o644);
        if (created) await this.giveToOwner(handle);
      } finally {
        await handle.close();
      }
    } finally {
      await folder.close();
    }
  }

  /** Removes a file or a symlink itself (never its target); refuses folders. */
  async removeFile(rel: string): Promise<void> {
    const { parts } = await this.locate(rel, false);
    const name = fileName(parts, rel);
    const folder = await this.openFolder(parts.slice(0, -1), rel, false);
    try {
      const at = under(folder, name);
      if ((await lstat(at)).isDirectory()) throw nodeError('EISDIR', 'is a folder');
      await unlink(at);
    } finally {
      await folder.close();
    }
  }

  /** Creates (or replaces) a symlink whose target text is stored as-is, not followed. */
  async createSymlink(rel: string, target: string): Promise<void> {
    const { parts } = await this.locate(rel, false);
    const name = fileName(parts, rel);
    const folder = await this.openFolder(parts.slice(0, -1), rel, true);
    try {
      const at = under(folder, name);
      const existing = await lstatIfPresent(at);
      if (existing?.isDirectory()) throw nodeError('EISDIR', 'is a folder');
      if (existing) await unlink(at);
      await symlink(target, at);
      if (this.owner) await lchown(at, this.owner.uid, this.owner.gid);
    } finally {
      await folder.close();
    }
  }

  /** Regular files under folder, relative to the root, sorted, at most cap; skips .git and symlinked folders. */
  async listFiles(folder: string | undefined, cap: number): Promise<string[]> {
    const parts = folder === undefined || folder === '' ? [] : (await this.locate(folder, true)).parts;
    const handle = await this.openFolder(parts, folder ?? '.', false);
    try {
      const files: string[] = [];
      await this.collectFiles(handle, parts, files, cap);
      return files.sort();
    } finally {
      await handle.close();
    }
  }

  /** What is at rel without following its last component; null when absent. */
  async inspect(rel: string): Promise<CloneEntry | null> {
    const { parts } = await this.locate(rel, false);
    const name = fileName(parts, rel);
    const folder = await this.openFolder(parts.slice(0, -1), rel, false).catch((err: unknown) => {
      if (errorCode(err) === 'ENOENT' || errorCode(err) === 'ENOTDIR') return null;
      throw err;
    });
    if (folder === null) return null;
    try {
      const info = await lstatIfPresent(under(folder, name));
      if (info === null) return null;
      if (info.isSymbolicLink()) return { kind: 'symlink', target: await readlink(under(folder, name)) };
      if (!info.isFile()) return { kind: 'other' };
      return await this.inspectFile(folder, name, parts, rel);
    } finally {
      await folder.close();
    }
  }

  private async inspectFile(folder: FileHandle, name: string, parts: Parts, rel: string): Promise<CloneEntry> {
    const handle = await this.openVerified(under(folder, name), readFlags, parts, rel);
    try {
      const info = await handle.stat();
      if (!info.isFile()) return { kind: 'other' };
      // Git records the executable bit from the owner's x bit.
      return { kind: 'file', bytes: await handle.readFile(), executable: (info.mode & 0o100) !== 0 };
    } finally {
      await handle.close();
    }
  }

  private realRoot(): Promise<string> {
    this.realRootPromise ??= realpath(this.root).catch((err: unknown) => {
      this.realRootPromise = undefined;
      throw err;
    });
    return this.realRootPromise;
  }

  private async absolute(parts: Parts): Promise<string> {
    return path.posix.join(await this.realRoot(), ...parts);
  }

  /** Resolves rel component by component, following in-clone symlinks (the last one only when followLast). */
  private async locate(rel: string, followLast: boolean): Promise<Located> {
    let wanted = requestedParts(rel);
    for (let links = 0; ; links++) {
      const step = await this.walk(wanted, followLast);
      if ('located' in step) return step.located;
      if (links >= maxLinks) throw new PathRefused(`path "${rel}" goes through too many symbolic links`);
      wanted = [...(await this.linkDestination(step.link.folder, step.link.target, rel)), ...step.link.rest];
    }
  }

  /** lstats each component in turn, stopping at the first symlink to follow. */
  private async walk(wanted: Parts, followLast: boolean): Promise<WalkStep> {
    if (wanted.length === 0) return { located: { parts: wanted, last: await lstat(await this.realRoot()) } };
    for (let i = 0; i < wanted.length; i++) {
      const at = await this.absolute(wanted.slice(0, i + 1));
      const info = await lstatIfPresent(at);
      if (info === null) return { located: { parts: wanted, last: null } };
      const isLast = i === wanted.length - 1;
      if (info.isSymbolicLink() && (followLast || !isLast)) {
        return { link: { folder: wanted.slice(0, i), target: await readlink(at), rest: wanted.slice(i + 1) } };
      }
      if (isLast) return { located: { parts: wanted, last: info } };
    }
    throw new Error('unreachable: the loop returns at the last component');
  }

  /** Where a link found in folder points, as parts below the root; absolute targets count only inside the real root. */
  private async linkDestination(folder: Parts, target: string, requested: string): Promise<Parts> {
    const realRoot = await this.realRoot();
    const normal = target.startsWith('/') ? path.posix.relative(realRoot, path.posix.normalize(target)) : path.posix.normalize(path.posix.join(...folder, target));
    if (normal === '..' || normal.startsWith('../') || normal.startsWith('/')) {
      throw new PathRefused(`path "${requested}" leads outside the repository`);
    }
    return checkedParts(normal);
  }

  /** Names the in-clone target of a final-component link so the model can write there instead. */
  private async writeThroughLinkRefusal(rel: string): Promise<PathRefused> {
    try {
      const target = (await this.locate(rel, true)).parts.join('/') || '.';
      return new PathRefused(`path "${rel}" is a symbolic link to "${target}"; write "${target}" instead`);
    } catch (err) {
      if (err instanceof PathRefused) return err;
      throw err;
    }
  }

  /** Opens the folder at parts one component at a time below the root, never following a link; creates missing ones when asked. */
  private async openFolder(parts: Parts, rel: string, create: boolean): Promise<FileHandle> {
    let folder = await open(await this.realRoot(), O_RDONLY | O_DIRECTORY);
    try {
      for (const name of parts) {
        const child = await this.openChildFolder(folder, name, rel, create);
        await folder.close();
        folder = child;
      }
      await this.verifyOpened(folder, parts, rel);
      return folder;
    } catch (err) {
      await folder.close();
      throw err;
    }
  }

  private async openChildFolder(folder: FileHandle, name: string, rel: string, create: boolean): Promise<FileHandle> {
    const at = under(folder, name);
    try {
      return await this.openNoFollow(at, folderFlags, rel);
    } catch (err) {
      if (!create || errorCode(err) !== 'ENOENT') throw err;
    }
    // mkdir never follows a link: one that appeared meanwhile makes it fail, and the open below refuses it.
    const made = await mkdir(at, 0o755).then(
      () => true,
      (err: unknown) => {
        if (errorCode(err) === 'EEXIST') return false;
        throw err;
      },
    );
    const child = await this.openNoFollow(at, folderFlags, rel);
    try {
      if (made) await this.giveToOwner(child);
      return child;
    } catch (err) {
      await child.close();
      throw err;
    }
  }

  private async giveToOwner(handle: FileHandle): Promise<void> {
    if (this.owner) await handle.chown(this.owner.uid, this.owner.gid);
  }

  /** Opens with O_NOFOLLOW; a link where a folder or file was expected means the path changed after it was checked. */
  private async openNoFollow(at: string, flags: number, rel: string, mode?: number): Promise<FileHandle> {
    try {
      return await open(at, flags | O_NOFOLLOW, mode);
    } catch (err) {
      const code = errorCode(err);
      if (code === 'ELOOP') throw changedWhileOpening(rel);
      // With O_DIRECTORY a link reports ENOTDIR rather than ELOOP.
      if (code === 'ENOTDIR' && (await lstatIfPresent(at))?.isSymbolicLink()) throw changedWhileOpening(rel);
      throw err;
    }
  }

  /** Opens the file at parts inside its confined folder and checks that the descriptor really is that path. */
  private async openFile(parts: Parts, rel: string, flags: number): Promise<FileHandle> {
    const name = fileName(parts, rel);
    const folder = await this.openFolder(parts.slice(0, -1), rel, false);
    try {
      return await this.openVerified(under(folder, name), flags, parts, rel);
    } finally {
      await folder.close();
    }
  }

  private async openForWriting(folder: FileHandle, name: string, parts: Parts, rel: string): Promise<{ handle: FileHandle; created: boolean }> {
    const at = under(folder, name);
    try {
      return { handle: await this.openVerified(at, writeFlags | O_CREAT | O_EXCL, parts, rel, 0o644), created: true };
    } catch (err) {
      if (errorCode(err) !== 'EEXIST') throw err;
    }
    return { handle: await this.openVerified(at, writeFlags, parts, rel), created: false };
  }

  private async openVerified(at: string, flags: number, parts: Parts, rel: string, mode?: number): Promise<FileHandle> {
    const handle = await this.openNoFollow(at, flags, rel, mode);
    try {
      await this.verifyOpened(handle, parts, rel);
      return handle;
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  /** Catches a component swapped for a link after it was checked: the kernel's own name for the descriptor must be the resolved path. */
  private async verifyOpened(handle: FileHandle, parts: Parts, rel: string): Promise<void> {
    const actual = await readlink(`/proc/self/fd/${handle.fd}`);
    if (actual !== (await this.absolute(parts))) throw changedWhileOpening(rel);
  }

  private async collectFiles(folder: FileHandle, parts: Parts, out: string[], cap: number): Promise<void> {
    const entries = (await readdir(`/proc/self/fd/${folder.fd}`, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (out.length >= cap) return;
      if (isGitName(entry.name)) continue;
      if (entry.isFile()) out.push([...parts, entry.name].join('/'));
      else if (entry.isDirectory()) await this.collectSubfolder(folder, entry.name, parts, out, cap);
    }
  }

  private async collectSubfolder(folder: FileHandle, name: string, parts: Parts, out: string[], cap: number): Promise<void> {
    // A folder swapped for a link since readdir fails to open here and is skipped.
    const child = await open(under(folder, name), folderFlags).catch(() => null);
    if (child === null) return;
    try {
      await this.collectFiles(child, [...parts, name], out, cap);
    } finally {
      await child.close();
    }
  }
}
