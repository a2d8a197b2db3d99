import { ApplicationFailure } from '@temporalio/activity';
import type { Tool } from 'ai';
import type { JobLedger } from '../../src/jobs/ledger';
import { AppError } from '../../src/errors';
import type { CommandResult, RunOptions } from '../../src/sandbox';
import type { ProjectSecretStore } from '../../src/secrets/project-secrets';
import { redactDeep, secretRedactor, type Redact } from '../../src/secrets/redactor';
import type { FileChange } from '../../workflows/agent-job-contract';
import type { TurnSandbox } from './sandbox-workspace';

/** A turn's secrets: the variables setup (and, if the project says so, check) commands get, and their redactor. */
export interface TurnSecrets {
  env: Readonly<Record<string, string>>;
  redact: Redact;
}

export const noSecrets: TurnSecrets = { env: {}, redact: (text) => text };

/**
 * Reads the job's project secrets from the database when the turn starts, so no value travels through Temporal
 * history; a worker without DOCENT_SECRET_KEY cannot run a project that has some.
 */
export async function loadTurnSecrets(jobs: Pick<JobLedger['jobs'], 'byId'>, store: ProjectSecretStore, jobId: string): Promise<TurnSecrets> {
  const job = await jobs.byId(jobId);
  if (!job) return noSecrets;
  try {
    const env = await store.open(job.projectId);
    return { env, redact: secretRedactor(env) };
  } catch (err) {
    if (err instanceof AppError) throw ApplicationFailure.create({ type: 'SandboxUnavailable', message: `project ${job.projectId} has setup secrets, but ${err.message}`, nonRetryable: true });
    throw err;
  }
}

/** Runs a command with the turn's secrets in its environment (or without), its output redacted as it leaves the sandbox. */
export function redactedRun(sandbox: TurnSandbox, secrets: TurnSecrets, giveSecrets: boolean) {
  return async (command: string, opts: RunOptions = {}): Promise<CommandResult> => {
    const r = await sandbox.run(command, giveSecrets && Object.keys(secrets.env).length ? { ...opts, env: { ...opts.env, ...secrets.env } } : opts);
    return { ...r, output: secrets.redact(r.output) };
  };
}

/** The model's tools with every result redacted: a file setup wrote may hold a secret the agent then reads. */
export function redactToolResults<T extends Record<string, Tool>>(tools: T, redact: Redact): T {
  const wrapped = Object.entries(tools).map(([name, t]) => {
    const execute = t.execute;
    return [name, execute ? { ...t, execute: async (...args: Parameters<typeof execute>) => redactDeep(await execute(...args), redact) } : t];
  });
  return Object.fromEntries(wrapped) as T;
}

/**
 * The changes without any file that holds a secret (a setup step's `.npmrc` with a token): such a file must never
 * reach the commit, the pull request or the workflow's history. `held` names the ones left out.
 */
export function secretFreeChanges(changes: FileChange[], redact: Redact, held: Set<string>): FileChange[] {
  return changes.filter((c) => {
    const text = c.content === null ? '' : c.encoding === 'base64' ? Buffer.from(c.content, 'base64').toString('latin1') : c.content;
    if (redact(text) === text) return true;
    held.add(c.path);
    return false;
  });
}

/** What the pull request says about files left out of it, or removed from HOME after setup, for holding a secret. */
export function heldBackNote(held: Set<string>, swept: string[]): string {
  const list = (paths: Iterable<string>) => [...paths].map((p) => `\`${p}\``).join(', ');
  return [
    held.size ? `\n\nLeft out of this change because they hold a project secret: ${list(held)}.` : '',
    swept.length ? `\n\nRemoved from HOME after setup because they hold a project secret: ${list(swept.map((p) => `~/${p}`))}.` : '',
  ].join('');
}

/** The raw and base64 forms of every secret, as variables only the sweep's own command gets. */
function formVariables(secrets: TurnSecrets): Record<string, string> {
  const forms = new Set<string>();
  for (const value of Object.values(secrets.env)) {
    const bytes = Buffer.from(value, 'utf8');
    for (const form of [value, bytes.toString('base64').replace(/=+$/, ''), bytes.toString('base64url')]) forms.add(form);
  }
  return Object.fromEntries([...forms].map((form, i) => [`DOCENT_SECRET_FORM_${i}`, form]));
}

/**
 * After setup, removes the files a step left in HOME that hold a secret (a `~/.npmrc` with the token), so the agent's
 * commands, which share that HOME, cannot read them. Runs inside the sandbox, as its user, so no link a step planted
 * can lead the removal elsewhere. Returns the removed paths, relative to HOME.
 */
export async function sweepSecretFiles(sandbox: TurnSandbox, secrets: TurnSecrets, signal: AbortSignal): Promise<string[]> {
  const forms = formVariables(secrets);
  if (Object.keys(forms).length === 0) return [];
  const patterns = Object.keys(forms)
    .map((name) => `-e "$${name}"`)
    .join(' ');
  const command = `find "$HOME" -maxdepth 4 -type f -size -1024k -print0 | xargs -0 -r grep -lsF ${patterns} -- | while IFS= read -r f; do rm -f -- "$f" && printf '%s\\n' "\${f#"$HOME"/}"; done`;
  const r = await sandbox.run(command, { signal, env: forms });
  return secrets
    .redact(r.output)
    .split('\n')
    .filter((line) => line.trim() !== '');
}
