import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

/**
 * Whether the files below `dir` at `paths` take more than `budget` bytes by their apparent size (a sparse file counts
 * whole: tar reads it whole). Walks with lstat only, never through a link, and stops as soon as the budget is passed,
 * so setup leaving fifty 1 GiB sparse files is refused after fifty lstat calls instead of reading 50 GiB.
 */
export async function overBudget(dir: string, paths: string[], budget: number): Promise<boolean> {
  let total = 0;
  const pending = paths.map((p) => path.join(dir, p));
  while (pending.length > 0) {
    const file = pending.pop()!;
    const st = await lstat(file).catch(() => undefined);
    if (!st) continue;
    if (st.isDirectory()) {
      for (const name of await readdir(file).catch(() => [] as string[])) pending.push(path.join(file, name));
    } else if (st.isFile()) {
      total += st.size;
      if (total > budget) return true;
    }
  }
  return false;
}
