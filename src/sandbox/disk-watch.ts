// Growth of the used bytes and inodes of a filesystem, polled with statfs: RLIMIT_FSIZE bounds one file, this bounds them all.
import { statfs } from 'node:fs/promises';

export const DISK_POLL_MS = 50;
/** Inodes one command may add when the limits do not say: far more than a large npm install creates, far below a filesystem's total. */
export const DEFAULT_MAX_INODES = 200_000;

export interface DiskUsage {
  bytes: number;
  inodes: number;
}

/** Bytes and inodes in use on the filesystem holding `path`. */
export async function diskUsage(path: string): Promise<DiskUsage> {
  const s = await statfs(path);
  return { bytes: (s.blocks - s.bfree) * s.bsize, inodes: s.files - s.ffree };
}

/** Calls `onExceeded` once when the filesystem's used bytes grew more than `max.bytes`, or its used inodes more than `max.inodes`, over `baseline`. */
export function watchDiskGrowth(path: string, baseline: DiskUsage, max: DiskUsage, onExceeded: (what: 'bytes' | 'inodes') => void, intervalMs = DISK_POLL_MS): { stop(): void } {
  let busy = false;
  let done = false;
  const timer = setInterval(() => {
    // A slow statfs must not pile up polls.
    if (busy || done) return;
    busy = true;
    diskUsage(path).then(
      (used) => {
        busy = false;
        if (done) return;
        // A filesystem without inode accounting (files = 0, as btrfs reports) never trips the inode limit.
        const what = used.bytes - baseline.bytes > max.bytes ? 'bytes' : used.inodes - baseline.inodes > max.inodes ? 'inodes' : undefined;
        if (!what) return;
        done = true;
        clearInterval(timer);
        onExceeded(what);
      },
      () => {
        busy = false;
      },
    );
  }, intervalMs);
  return {
    stop() {
      done = true;
      clearInterval(timer);
    },
  };
}
