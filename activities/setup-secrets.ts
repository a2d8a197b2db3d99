import { ApplicationFailure } from '@temporalio/activity';
import type { Tool } from 'ai';
import type { Db } from 'mongodb';
import { AppError } from '../src/errors';
import type { CommandResult, RunOptions } from '../src/sandbox';
import type { ProjectSecretStore } from '../src/secrets/project-secrets';
import { redactDeep, secretRedactor, type Redact } from '../src/secrets/redactor';
import type { FileChange } from '../workflows/contracts';
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
export async function loadTurnSecrets(db: Db, store: ProjectSecretStore, jobId: string): Promise<TurnSecrets> {
  const job = await db.collection<{ _id: string; projectId: string }>('jobs').findOne({ _id: jobId }, { projection: { projectId: 1 } });
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

/** What the pull request says about files left out of it for holding a secret. */
export const heldBackNote = (held: Set<string>) => (held.size ? `\n\nLeft out of this change because they hold a project secret: ${[...held].map((p) => `\`${p}\``).join(', ')}.` : '');
