// Growth of the used bytes of a filesystem, polled with statfs: RLIMIT_FSIZE bounds one file, this bounds them all.
import { statfs } from 'node:fs/promises';

export const DISK_POLL_MS = 50;

/** Bytes in use on the filesystem holding `path`. */
export async function usedBytes(path: string): Promise<number> {
  const s = await statfs(path);
  return (s.blocks - s.bfree) * s.bsize;
}

/** Calls `onExceeded` once when the filesystem's used bytes have grown more than `maxBytes` over `baseline`. */
export function watchDiskGrowth(path: string, baseline: number, maxBytes: number, onExceeded: () => void, intervalMs = DISK_POLL_MS): { stop(): void } {
  let busy = false;
  let done = false;
  const timer = setInterval(() => {
    // A slow statfs must not pile up polls.
    if (busy || done) return;
    busy = true;
    usedBytes(path).then(
      (used) => {
        busy = false;
        if (!done && used - baseline > maxBytes) {
          done = true;
          clearInterval(timer);
          onExceeded();
        }
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
