// How this host lays out its top-level toolchain directories, so the sandbox mirrors it.
import { lstat, readlink } from 'node:fs/promises';

/** How one of /bin, /sbin, /lib, /lib64 appears in the sandbox. */
export type TopLevelEntry = { path: string; kind: 'symlink'; target: string } | { path: string; kind: 'directory' };

export const TOP_LEVEL_DIRS = ['/bin', '/sbin', '/lib', '/lib64'] as const;

let cached: Promise<TopLevelEntry[]> | undefined;

async function detect(): Promise<TopLevelEntry[]> {
  const out: TopLevelEntry[] = [];
  for (const path of TOP_LEVEL_DIRS) {
    const st = await lstat(path).catch(() => undefined);
    if (!st) continue;
    // Merged-/usr hosts: recreate the symlink rather than bind what it points to twice.
    if (st.isSymbolicLink()) out.push({ path, kind: 'symlink', target: await readlink(path) });
    else if (st.isDirectory()) out.push({ path, kind: 'directory' });
  }
  return out;
}

/** The host's /bin, /sbin, /lib, /lib64 (looked up once per process: the host's layout does not change under a running worker). */
export function hostTopLevel(): Promise<TopLevelEntry[]> {
  cached ??= detect().catch((err) => {
    cached = undefined;
    throw err;
  });
  return cached;
}
