import type { Output } from '../admin/tenancy-operations';
import { AppError } from '../errors';

/** Wrong words or options: the command prints its usage and exits 2. */
export class UsageError extends Error {}

/**
 * Runs one command and prints what it answered (the JSON with --json, else the text, its note on stderr); its exit
 * code: 0, 2 for wrong words or options (with `usage`), 1 for a command that ran and was refused.
 */
export async function printed(run: () => Promise<{ out: Output; json: boolean }>, usage: string): Promise<number> {
  try {
    const { out, json } = await run();
    if (json) console.log(JSON.stringify(out.json, null, 2));
    else {
      console.log(out.text);
      if (out.note) console.error(out.note);
    }
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`docent: ${err.message}\n${usage}`);
      return 2;
    }
    if (err instanceof AppError) {
      console.error(`docent: ${err.message}`);
      return 1;
    }
    throw err;
  }
}
