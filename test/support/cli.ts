import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

const cli = path.resolve(__dirname, '../../dist/src/cli/main.js');

/** Runs the compiled `docent` command as its own process, the way an operator runs it, with `env` over the test's. */
export function runDocent(args: string[], env: Record<string, string>): Promise<CliRun> {
  return runDocentIn(args, { ...process.env, ...env });
}

/** Runs the compiled `docent` command with exactly this environment and nothing of the test's (no stack settings). */
export function runDocentIn(args: string[], env: Record<string, string | undefined>): Promise<CliRun> {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npm run build\` (npm test does)`);
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}
