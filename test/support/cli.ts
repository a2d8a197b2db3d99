import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

const cli = path.resolve(__dirname, '../../dist/src/cli/main.js');

/** Runs the compiled `docent` command as its own process, the way an operator runs it, with `env` over the test's. */
export function runDocent(args: string[], env: Record<string, string | undefined>, stdin = ''): Promise<CliRun> {
  return runDocentIn(args, { ...process.env, ...env }, stdin);
}

/**
 * Runs the compiled `docent` command with exactly this environment and nothing of the test's (no stack settings); a
 * variable set to undefined is left out. `stdin` is what the command reads, for the commands that take a value there.
 */
export function runDocentIn(args: string[], env: Record<string, string | undefined>, stdin = ''): Promise<CliRun> {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npm run build\` (npm test does)`);
  const defined = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { env: defined, timeout: 60_000 });
    let [stdout, stderr] = ['', ''];
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    // A command that exits before reading its input closes the pipe: that is its answer, not the test's failure.
    child.stdin.on('error', () => undefined);
    // Killed by the timeout above: exit code 1, a failure like any other.
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(stdin);
  });
}
