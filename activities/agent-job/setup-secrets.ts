import { ApplicationFailure } from '@temporalio/activity';
import type { JobLedger } from '../../src/jobs/ledger';
import { AppError } from '../../src/errors';
import type { OutputFilter } from '../../src/sandbox';
import type { ProjectSecretStore } from '../../src/secrets/project-secrets';
import { encodedForms, printedForms } from '../../src/secrets/forms';
import { secretRedactor, secretStreamRedactor, type Redact } from '../../src/secrets/redactor';
import type { TurnSandbox } from './sandbox-workspace';

/** A turn's secrets: the variables setup (and, if the project says so, check) commands get, and their redactor. */
export interface TurnSecrets {
  env: Readonly<Record<string, string>>;
  redact: Redact;
  /** Redacts a command's output as it streams, before it is cut; absent when there are no secrets. */
  stream?: () => OutputFilter;
}

/** A turn without secrets: the redactors of an empty set, which change nothing. */
export const noSecrets: TurnSecrets = turnSecrets({});

/** A turn's secrets from their values: what commands get, and the redactors of what they print. */
export function turnSecrets(env: Readonly<Record<string, string>>): TurnSecrets {
  return { env, redact: secretRedactor(env), stream: secretStreamRedactor(env) };
}

/**
 * Reads the job's project secrets from the database when the turn starts, so no value travels through Temporal
 * history; a worker without DOCENT_SECRET_KEY cannot run a project that has some.
 */
export async function loadTurnSecrets(jobs: Pick<JobLedger['jobs'], 'byId'>, store: ProjectSecretStore, jobId: string): Promise<TurnSecrets> {
  const job = await jobs.byId(jobId);
  if (!job) return noSecrets;
  try {
    return turnSecrets(await store.open(job.projectId));
  } catch (err) {
    if (err instanceof AppError) throw ApplicationFailure.create({ type: 'SandboxUnavailable', message: `project ${job.projectId} has setup secrets, but ${err.message}`, nonRetryable: true });
    throw err;
  }
}

/** The printed forms of every secret, and those of them that may be wrapped, as variables only the sweep gets. */
function formVariables(secrets: TurnSecrets): { plain: Record<string, string>; wrapped: Record<string, string> } {
  const plain = new Set<string>();
  const wrapped = new Set<string>();
  for (const value of Object.values(secrets.env)) {
    for (const form of printedForms(value)) plain.add(form);
    for (const form of encodedForms(value)) wrapped.add(form);
  }
  const named = (prefix: string, forms: Set<string>) => Object.fromEntries([...forms].map((form, i) => [`DOCENT_${prefix}_${i}`, form]));
  return { plain: named('SECRET_FORM', plain), wrapped: named('WRAPPED_FORM', wrapped) };
}

/**
 * The sweep's shell command: every file under HOME, at any depth and of any size (grep -r follows no link), is searched
 * for each form on one line and, with lines joined (-z), for the hex and base64 forms with whitespace anywhere inside.
 * Files setup made unreadable are made readable first, since the agent's commands could do the same. Exits non-zero
 * when a search could not finish, so an unsearched HOME is never handed to the agent.
 */
function sweepCommand(forms: ReturnType<typeof formVariables>): string {
  const list = (vars: Record<string, string>) =>
    Object.keys(vars)
      .map((name) => `"$${name}"`)
      .join(' ');
  return [
    // The run's own /tmp (a tmpfs gone when it ends) holds the patterns.
    't=$(mktemp -d) || exit 2',
    `for v in ${list(forms.plain)}; do printf '%s\\n' "$v"; done > "$t/plain"`,
    // Each character of a wrapped form may be followed by whitespace; [+] because + is special in a pattern.
    `for v in ${list(forms.wrapped)}; do printf '%s\\n' "$v" | sed -e 's/[+]/[+]/g' -e 's#[A-Za-z0-9_/-]\\|\\[+\\]#&[[:space:]]*#g'; done > "$t/wrapped"`,
    'chmod -R u+rwX "$HOME" 2>/dev/null',
    // -Z: names end in NUL, so a name with a newline in it cannot split into two that match nothing.
    'grep -rlsFZ -D skip -f "$t/plain" -- "$HOME" > "$t/found"; a=$?',
    'if [ -s "$t/wrapped" ]; then grep -rlszEZ -D skip -f "$t/wrapped" -- "$HOME" >> "$t/found"; b=$?; else b=0; fi',
    `sort -zu "$t/found" | xargs -0 -r sh -c 'for f; do rm -f -- "$f" && printf "%s\\n" "\${f#"$HOME"/}"; done' sh`,
    'rm -rf "$t"',
    '[ "$a" -le 1 ] && [ "$b" -le 1 ]',
  ].join('\n');
}

/**
 * After setup, removes the files a step left in HOME that hold a secret (a `~/.npmrc` with the token), so the agent's
 * commands, which share that HOME, cannot read them. Runs inside the sandbox, as its user, so no link a step planted
 * can lead the removal elsewhere. Returns the removed paths, relative to HOME; fails the turn when HOME could not be
 * searched to the end.
 */
export async function sweepSecretFiles(sandbox: TurnSandbox, secrets: TurnSecrets, signal: AbortSignal): Promise<string[]> {
  if (Object.keys(secrets.env).length === 0) return [];
  const forms = formVariables(secrets);
  const r = await sandbox.run(sweepCommand(forms), { signal, env: { ...forms.plain, ...forms.wrapped }, headBytes: 0, tailBytes: 64 * 1024 });
  const removed = secrets
    .redact(r.output)
    .split('\n')
    .filter((line) => line.trim() !== '');
  if (r.exitCode !== 0) {
    throw ApplicationFailure.create({
      type: 'SetupSweepFailed',
      message: `setup left files in HOME that could not be searched for project secrets (exit ${r.exitCode}${r.stoppedBy ? `, ${r.stoppedBy}` : ''})`,
      nonRetryable: true,
    });
  }
  return removed;
}
