import type { CommandResult } from '../../src/sandbox';
import type { CheckResult } from '../../workflows/agent-job-contract';

type Run = (command: string) => Promise<CommandResult>;

/** Bytes of a command's output kept on the job and shown to the agent: the end, where failures are reported. */
export const keptOutputBytes = 4096;

async function runOne(kind: CheckResult['kind'], command: string, run: Run): Promise<CheckResult> {
  const r = await run(command);
  return { kind, command, exitCode: r.exitCode, durationMs: Math.round(r.durationMs), output: r.output, ...(r.stoppedBy ? { stoppedBy: r.stoppedBy } : {}) };
}

/** Setup commands in order, stopping at the first that fails: later ones usually depend on it. */
export async function runSetup(commands: string[], run: Run): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const command of commands) {
    results.push(await runOne('setup', command, run));
    if (results.at(-1)!.exitCode !== 0) break;
  }
  return results;
}

/** Every check command, even after one fails, so the agent and the pull request see all that is wrong. */
export async function runChecks(commands: string[], run: Run): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const command of commands) results.push(await runOne('check', command, run));
  return results;
}

export const failed = (results: CheckResult[]) => results.filter((r) => r.exitCode !== 0);

/** A failed command for the agent; the output of one that had the project's secrets is left out, redacted or not. */
function describe(r: CheckResult, hadSecrets: boolean): string {
  const why = r.stoppedBy === 'timeout' ? 'was stopped at the time limit' : r.stoppedBy === 'disk' ? 'was stopped for using too much disk' : `exited with ${r.exitCode}`;
  if (hadSecrets) return `\`${r.command}\` ${why}. Its output is not shown to you because it ran with the project's secrets.`;
  return `\`${r.command}\` ${why}. The end of its output:\n${r.output}`;
}

/** What the agent is told when the project's setup failed before it started. */
export function setupFailureNote(setup: CheckResult[], hadSecrets: boolean): string {
  const bad = failed(setup);
  return bad.length ? `Note: the project's setup command ${bad.map((r) => describe(r, hadSecrets)).join('\n\n')}` : '';
}

/** The follow-up message of a repair round. */
export function repairPrompt(checks: CheckResult[], hadSecrets: boolean): string {
  const told = failed(checks).map((r) => describe(r, hadSecrets));
  return `The project's checks failed after your change. Fix the code so that they pass, then answer with the title and summary again.\n\n${told.join('\n\n')}`;
}
