import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { generateText, stepCountIs, type ModelMessage } from 'ai';
import type { SimpleGit } from 'simple-git';
import type { SandboxConfig } from '../../src/config';
import { catalogEntry, type CatalogModel } from '../../src/llm/model-catalog';
import { SandboxUnavailable } from '../../src/sandbox';
import type { Redact } from '../../src/secrets/redactor';
import type { CheckResult, FileChange, RunAgentInput, RunAgentResult } from '../../workflows/agent-job-contract';
import { CloneFs } from './clone-fs';
import { jobLanguageModel, modelFailure } from './model-failures';
import { applyChanges, checkoutClean, contextFolder, sandboxHomePath, workspacePath, type GitDeps } from './git';
import { runCachedSetup } from './cached-setup';
import { startsAtBaseRef } from './owner-code';
import { egressEventSink } from './egress-events';
import { failed, keptOutputBytes, prepareTurnSandbox, redactedRun, runChecks, withheldNote, type TurnSandbox } from './sandbox-workspace';
import type { SetupCache } from './setup-cache';
import type { SetupCacheHolders } from './setup-cache-holders';
import { noSecrets, sweepSecretFiles, type TurnSecrets } from './setup-secrets';
import { followTurn, budgetExceeded, type TurnJournal } from './turn-journal';
import { instructionImageParts, type ImageDeps } from './instruction-images';
import { commandTool, defaultToolLimits, redactToolResults, workspaceTools } from './workspace-tools';
import { linkNetwork, linkTool } from './link-tool';
import { turnSystemPrompt } from './project-instructions';
import { contextNote, ensureContextClones } from './context-clones';

export interface AgentDeps extends GitDeps {
  /** The models this worker may call (DOCENT_MODELS); a job names one of them. */
  models: CatalogModel[];
  /** Undefined when DOCENT_SANDBOX=off: no run_command, and projects with checks fail their turns. */
  sandbox?: SandboxConfig;
  repairRounds: number;
  /** Where steps, usage and check results are recorded as they happen (absent in unit tests). */
  journal?: TurnJournal;
  /** The job's project secrets, read from the database when a turn starts (absent in unit tests: none). */
  secrets?: (jobId: string) => Promise<TurnSecrets>;
  /** Where an instruction's images are read or fetched (absent in unit tests: instructions with images fail). */
  images?: ImageDeps;
  /** This worker's cache of setup results; absent when DOCENT_SETUP_CACHE=off. */
  setupCache?: SetupCache;
  /** Where this worker says it holds a project's setup, for later jobs to prefer it (absent in unit tests). */
  setupHolders?: SetupCacheHolders;
}

/** The most the agent may change in one turn, so results fit in workflow history. */
const maxTotalChangeBytes = 1024 * 1024;

const systemPrompt = `You are docent's coding agent working in a git repository.
Use the tools to inspect and change files; every path is relative to the repository root.
When run_command is available, use it to run the project's tests, linters or builds and fix what fails.
Make only the changes the instruction asks for. When you are done, answer with a short title for the pull request
on the first line (under 72 characters), then a blank line, then a summary of what you changed and why.`;

/** A failed command for the agent; the output of one that had the project's secrets is left out, redacted or not. */
function describe(r: CheckResult, hadSecrets: boolean): string {
  const why = r.stoppedBy === 'timeout' ? 'was stopped at the time limit' : r.stoppedBy === 'disk' ? 'was stopped for using too much disk' : `exited with ${r.exitCode}`;
  if (hadSecrets) return `\`${r.command}\` ${why}. Its output is not shown to you because it ran with the project's secrets.`;
  return `\`${r.command}\` ${why}. The end of its output:\n${r.output}`;
}

/** What the agent is told when the project's setup failed before it started. */
function setupFailureNote(setup: CheckResult[], hadSecrets: boolean): string {
  const bad = failed(setup);
  return bad.length ? `Note: the project's setup command ${bad.map((r) => describe(r, hadSecrets)).join('\n\n')}` : '';
}

/** The follow-up message of a repair round. */
function repairPrompt(checks: CheckResult[], hadSecrets: boolean): string {
  const told = failed(checks).map((r) => describe(r, hadSecrets));
  return `The project's checks failed after your change. Fix the code so that they pass, then answer with the title and summary again.\n\n${told.join('\n\n')}`;
}

function tooLarge(): never {
  throw ApplicationFailure.create({ type: 'AgentLimitExceeded', message: `the agent changed more than ${maxTotalChangeBytes} bytes in one turn`, nonRetryable: true });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function asChange(file: string, bytes: Buffer, executable: boolean): FileChange {
  const mode = executable ? ({ mode: 'executable' } as const) : {};
  try {
    return { path: file, content: utf8.decode(bytes), ...mode };
  } catch {
    return { path: file, content: bytes.toString('base64'), encoding: 'base64', ...mode };
  }
}

/** What the working tree holds now compared with HEAD, as whole-file changes read without following any link. */
async function collectChanges(git: SimpleGit, files: CloneFs, root: string): Promise<FileChange[]> {
  const porcelain = await git.raw(['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignore-submodules=all']);
  const changes: FileChange[] = [];
  let total = 0;
  for (const entry of porcelain.split('\0').filter(Boolean)) {
    const [code, file] = [entry.slice(0, 2), entry.slice(3)];
    // A folder here is a nested repository a command created: not part of this one.
    if (file.endsWith('/')) continue;
    // A cheap look before reading: a command may have left a file far larger than any change should be.
    const size = code.includes('D') ? 0 : ((await lstat(path.join(root, file)).catch(() => null))?.size ?? 0);
    if (size > maxTotalChangeBytes) tooLarge();
    const found = code.includes('D') ? null : await files.inspect(file);
    if (found === null) changes.push({ path: file, content: null });
    else if (found.kind === 'symlink') changes.push({ path: file, content: found.target, mode: 'symlink' });
    else if (found.kind === 'file') {
      total += found.bytes.length;
      changes.push(asChange(file, found.bytes, found.executable));
    }
  }
  if (total > maxTotalChangeBytes) tooLarge();
  return changes.sort((a, b) => a.path.localeCompare(b.path));
}

/**
 * The changes without any file that holds a secret (a setup step's `.npmrc` with a token): such a file must never
 * reach the commit, the pull request or the workflow's history. `held` names the ones left out.
 */
function secretFreeChanges(changes: FileChange[], redact: Redact, held: Set<string>): FileChange[] {
  return changes.filter((c) => {
    const text = c.content === null ? '' : c.encoding === 'base64' ? Buffer.from(c.content, 'base64').toString('latin1') : c.content;
    if (redact(text) === text) return true;
    held.add(c.path);
    return false;
  });
}

/** What the pull request says about files left out of it, or removed from HOME after setup, for holding a secret. */
function heldBackNote(held: Set<string>, swept: string[]): string {
  const list = (paths: Iterable<string>) => [...paths].map((p) => `\`${p}\``).join(', ');
  return [
    held.size ? `\n\nLeft out of this change because they hold a project secret: ${list(held)}.` : '',
    swept.length ? `\n\nRemoved from HOME after setup because they hold a project secret: ${list(swept.map((p) => `~/${p}`))}.` : '',
  ].join('');
}

function splitTitle(text: string, fallback: string): { title: string; summary: string } {
  const [first = '', ...rest] = text.trim().split('\n');
  const title = (first.replace(/^#+\s*/, '').trim() || fallback).slice(0, 72);
  return { title, summary: rest.join('\n').trim() || text.trim() || fallback };
}

/**
 * Runs the check commands on the agent's changes, then puts the tree back to exactly those changes, so whatever
 * the checks wrote (reports, builds) never reaches the commit; ignored files such as installed dependencies stay.
 */
async function verify(
  commands: string[],
  changes: FileChange[],
  git: SimpleGit,
  root: string,
  sandbox: TurnSandbox,
  check: ReturnType<typeof redactedRun>,
  signal: AbortSignal,
): Promise<CheckResult[]> {
  if (commands.length === 0) return [];
  const results = await runChecks(commands, (command) => check(command, { signal, headBytes: 0, tailBytes: keptOutputBytes }));
  await git.raw(['reset', '--hard', '--quiet']);
  await git.raw(['clean', '-ffd', '--quiet']);
  await applyChanges(root, changes, sandbox.owner);
  await sandbox.handOver();
  return results;
}

export function createAgentActivities(deps: AgentDeps) {
  return {
    /**
     * Runs the project's setup, the model's tool loop, and the project's checks with up to `repairRounds` rounds of
     * fixes, on a clean checkout of startCommit; returns the resulting file changes and check results. Retry-safe.
     */
    async runAgent(input: RunAgentInput): Promise<RunAgentResult> {
      const ctx = Context.current();
      const model = jobLanguageModel(deps.models, input.model);
      const project = input.instruction.checks ?? { setup: [], check: [], network: false };
      const runsCommands = project.setup.length + project.check.length > 0;
      if (!deps.sandbox && runsCommands) {
        throw ApplicationFailure.create({ type: 'SandboxUnavailable', message: 'the project has setup or check commands, but this worker runs with DOCENT_SANDBOX=off', nonRetryable: true });
      }
      const git = await checkoutClean(deps, input.jobId, input, input.startCommit);
      // Only code the project's owners wrote may be trusted with what only they should see (secrets, the shared cache),
      // which only setup and check commands are given: a project without them needs no answer.
      const baseRef = (await deps.journal?.ledger.jobs.byId(input.jobId))?.source.ref;
      const ownerCode = runsCommands && (await startsAtBaseRef(git, baseRef, input.startCommit));
      const root = workspacePath(deps, input.jobId);
      // The base ref's, never this turn's tree: neither a command nor the agent's own earlier commits write them.
      const system = await turnSystemPrompt(systemPrompt, git, baseRef, deps.journal, input.jobId, input.instruction.turn);
      const follow = await followTurn(deps.journal, input.jobId, input.model, input.instruction, ctx.info.attempt, input.move);
      const net = { network: project.network, allowHosts: project.allowHosts, onEgress: egressEventSink(deps.journal, input.jobId, input.instruction.turn, follow.keyPrefix) };
      const home = sandboxHomePath(deps.workspaceDir, input.jobId);
      const context = await ensureContextClones(deps, input.jobId, input.contextRepositories);
      const mounts = context.length ? { context: contextFolder(deps.workspaceDir, input.jobId) } : {};
      const sandbox = deps.sandbox ? await prepareTurnSandbox(deps.sandbox, root, home, net, mounts) : undefined;
      const secrets = sandbox && deps.secrets && runsCommands ? await deps.secrets(input.jobId) : noSecrets;
      // The turn's wall-time cap stops the agent the way a cancellation does, and is reported as budget_exceeded.
      const maxMinutes = input.instruction.caps?.maxTurnMinutes;
      const timeCap = maxMinutes === undefined ? undefined : AbortSignal.timeout(maxMinutes * 60_000);
      const signal = timeCap ? AbortSignal.any([ctx.cancellationSignal, timeCap]) : ctx.cancellationSignal;

      let steps = 0;
      // The model may think, and commands may run, for longer than the heartbeat timeout: beat all along.
      const beat = setInterval(() => ctx.heartbeat({ steps }), 1000);
      try {
        // Before setup: an image that cannot be had fails the turn before anything runs.
        const pictures = await instructionImageParts(deps.images, input.instruction.images, signal, catalogEntry(deps.models, input.model));
        // Code the model wrote (a follow-up turn's start) gets no secrets unless the operator said so for the project.
        const hasSecrets = Object.keys(secrets.env).length > 0;
        const giveSecrets = hasSecrets && (ownerCode || project.secretsForAgentCode === true);
        const checksGetSecrets = giveSecrets && project.secretsToChecks === true;
        const setupRun = sandbox && withheldNote(redactedRun(sandbox, secrets, giveSecrets), hasSecrets && !giveSecrets);
        const checkRun = sandbox && withheldNote(redactedRun(sandbox, secrets, checksGetSecrets), hasSecrets && !giveSecrets && project.secretsToChecks === true);
        const commandRun = sandbox && redactedRun(sandbox, secrets, false);
        const cached =
          sandbox && setupRun
            ? await runCachedSetup({
                cache: deps.setupCache,
                checks: project,
                git,
                commit: input.startCommit,
                root,
                home,
                sandbox,
                run: (command) => setupRun(command, { signal, headBytes: 0, tailBytes: keptOutputBytes }),
                withSecrets: giveSecrets,
                ownerCode,
                readOnlyPaths: deps.sandbox?.readOnlyPaths ?? [],
                signal,
                onHeld: async (project) => {
                  if (deps.workspaceQueue) await deps.setupHolders?.record(project, deps.workspaceQueue);
                },
              })
            : undefined;
        // The operator's view of why the next job on this key runs setup again (never the turn's failure).
        if (cached?.notStored && project.setupCache) ctx.log.info('setup result not cached', { jobId: input.jobId, reason: cached.notStored });
        const setup = cached?.results ?? [];
        const swept = sandbox && setup.length && giveSecrets ? await sweepSecretFiles(sandbox, secrets, signal) : [];
        const tools = follow.timed(
          redactToolResults(
            {
              ...workspaceTools(root, defaultToolLimits, sandbox?.owner, context),
              ...linkTool(root, linkNetwork(project.network, sandbox?.egressSocket)),
              ...(commandRun ? commandTool((command) => commandRun(command, { signal })) : {}),
            },
            secrets.redact,
          ),
          secrets.redact,
        );
        const history = input.instruction.history.map((p, i) => `Earlier instruction ${i + 1} (already done on this branch): ${p}`);
        const plan = input.instruction.approvedPlan && `The plan a person approved for this instruction (follow it):\n\n${input.instruction.approvedPlan}`;
        const opening = [...history, `Instruction: ${input.instruction.prompt}`, plan, contextNote(context, commandRun !== undefined), setupFailureNote(setup, giveSecrets)]
          .filter(Boolean)
          .join('\n\n');
        const messages: ModelMessage[] = [{ role: 'user', content: pictures.length ? [{ type: 'text', text: opening }, ...pictures] : opening }];
        const ask = () => {
          follow.asking();
          return generateText({
            model,
            system,
            messages,
            tools,
            stopWhen: [stepCountIs(input.maxSteps), follow.overBudget],
            maxRetries: 0, // Temporal retries the activity
            abortSignal: signal,
            onStepFinish: async (step) => {
              steps += 1;
              await follow.onStep(step);
            },
          });
        };

        await follow.onChecks(setup);
        let result = await ask();
        follow.assertWithinBudget();
        let text = secrets.redact(result.text);
        const files = new CloneFs(root, { owner: sandbox?.owner });
        const held = new Set<string>();
        let changes = secretFreeChanges(await collectChanges(git, files, root), secrets.redact, held);
        let checks = sandbox && checkRun ? await verify(project.check, changes, git, root, sandbox, checkRun, signal) : [];
        await follow.onChecks(checks);
        for (let round = 0; round < deps.repairRounds && failed(checks).length > 0 && sandbox && checkRun; round++) {
          messages.push(...result.responseMessages, { role: 'user', content: repairPrompt(checks, checksGetSecrets) });
          result = await ask();
          follow.assertWithinBudget();
          if (result.text.trim()) text = secrets.redact(result.text);
          changes = secretFreeChanges(await collectChanges(git, files, root), secrets.redact, held);
          checks = await verify(project.check, changes, git, root, sandbox, checkRun, signal);
          await follow.onChecks(checks);
        }

        const ran = [...setup, ...checks];
        const { title, summary: told } = splitTitle(text, `docent: ${input.instruction.prompt.split('\n')[0]}`);
        const summary = told + heldBackNote(held, swept);
        const checksPassed = ran.length ? failed(ran).length === 0 : null;
        // Kept for a retry that resumes after the push (the pull request's title, body and draft flag).
        await deps.journal?.ledger.recordTurnResult(input.jobId, input.instruction.turn, { title, summary, checks: ran, checksPassed });
        return { changes, title, summary, checks: ran, checksPassed };
      } catch (err) {
        if (timeCap?.aborted && !ctx.cancellationSignal.aborted) budgetExceeded(`the turn ran for the project's cap of ${maxMinutes} minutes`);
        const fromModel = modelFailure(err);
        if (fromModel) throw fromModel;
        if (err instanceof SandboxUnavailable) throw ApplicationFailure.create({ type: 'SandboxUnavailable', message: err.message, nonRetryable: true });
        throw err;
      } finally {
        clearInterval(beat);
        await sandbox?.close();
      }
    },
  };
}
