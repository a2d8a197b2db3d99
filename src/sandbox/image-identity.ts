// What the sandbox's root is made of (bwrap-args.ts binds /usr, the top-level links and the read-only paths), as one
// hash: a cached setup is only valid on the same system it ran on.
import { createHash } from 'node:crypto';
import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

/** Files that change whenever a Debian package, or the OS release, does. */
const SYSTEM_FILES = ['/usr/lib/os-release', '/etc/os-release', '/var/lib/dpkg/status'];
/** Folders filled outside the package manager (a hand-installed node in /usr/local): names, sizes and times two levels deep. */
const UNPACKAGED = ['/usr/local'];

async function listing(dir: string, depth: number, out: string[]): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names.sort()) {
    const full = path.join(dir, name);
    const info = await lstat(full).catch(() => undefined);
    if (!info) continue;
    out.push(`${full}\t${info.mode}\t${info.size}\t${info.mtimeMs}`);
    if (depth > 1 && info.isDirectory()) await listing(full, depth - 1, out);
  }
}

/** A hash of the host's /usr identity and the extra read-only paths the sandbox binds; read per call (apt may run under a live worker). */
export async function sandboxImageIdentity(readOnlyPaths: readonly string[]): Promise<string> {
  const hash = createHash('sha256');
  for (const file of SYSTEM_FILES) {
    const bytes = await readFile(file).catch(() => null);
    hash.update(`${file}\0${bytes ? createHash('sha256').update(bytes).digest('hex') : 'absent'}\0`);
  }
  const entries: string[] = [];
  for (const dir of [...UNPACKAGED, ...readOnlyPaths]) {
    entries.push(`root ${dir}`);
    await listing(dir, 2, entries);
  }
  hash.update(entries.join('\n'));
  return hash.digest('hex');
}
