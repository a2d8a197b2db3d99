import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { APICallError, generateText, stepCountIs } from 'ai';
import type { Config } from '../src/config';
import { createLanguageModel } from '../src/llm/model';
import type { FileChange, RunAgentInput, RunAgentResult } from '../workflows/contracts';
import { checkoutClean, workspacePath, type GitDeps } from './git';
import { workspaceTools } from './workspace-tools';

export interface AgentDeps extends GitDeps {
  model: Config['model'];
}

/** The most the agent may change in one turn, so results fit in workflow history. */
const maxTotalChangeBytes = 1024 * 1024;

const systemPrompt = `You are docent's coding agent working in a git repository.
Use the tools to inspect and change files; every path is relative to the repository root.
Make only the changes the instruction asks for. When you are done, answer with a short title for the pull request
on the first line (under 72 characters), then a blank line, then a summary of what you changed and why.`;

/** What the working tree holds now compared with startCommit, as whole-file changes. */
async function collectChanges(root: string, porcelain: string): Promise<FileChange[]> {
  const changes: FileChange[] = [];
  let total = 0;
  for (const entry of porcelain.split('\0').filter(Boolean)) {
    const code = entry.slice(0, 2);
    const file = entry.slice(3);
    if (code.includes('D')) changes.push({ path: file, content: null });
    else {
      const content = await readFile(path.join(root, file), 'utf8');
      total += Buffer.byteLength(content);
      changes.push({ path: file, content });
    }
  }
  if (total > maxTotalChangeBytes) {
    throw ApplicationFailure.create({ type: 'AgentLimitExceeded', message: `the agent changed more than ${maxTotalChangeBytes} bytes in one turn`, nonRetryable: true });
  }
  return changes.sort((a, b) => a.path.localeCompare(b.path));
}

function splitTitle(text: string, fallback: string): { title: string; summary: string } {
  const [first = '', ...rest] = text.trim().split('\n');
  const title = (first.replace(/^#+\s*/, '').trim() || fallback).slice(0, 72);
  return { title, summary: rest.join('\n').trim() || text.trim() || fallback };
}

export function createAgentActivities(deps: AgentDeps) {
  return {
    /** Runs the model's tool loop on a clean checkout of startCommit and returns the resulting file changes; retry-safe. */
    async runAgent(input: RunAgentInput): Promise<RunAgentResult> {
      const ctx = Context.current();
      const model = createLanguageModel(deps.model, input.model);
      if (!model) throw ApplicationFailure.create({ type: 'ModelRequestRejected', message: 'no model is configured on the worker', nonRetryable: true });
      const git = await checkoutClean(deps, input.jobId, input.repository, input.startCommit);
      const root = workspacePath(deps, input.jobId);

      let steps = 0;
      // The model may think for longer than the heartbeat timeout: beat while waiting, not only between steps.
      const beat = setInterval(() => ctx.heartbeat({ steps }), 1000);
      try {
        const history = input.instruction.history.map((p, i) => `Earlier instruction ${i + 1} (already done on this branch): ${p}`);
        const result = await generateText({
          model,
          system: systemPrompt,
          prompt: [...history, `Instruction: ${input.instruction.prompt}`].join('\n\n'),
          tools: workspaceTools(root),
          stopWhen: stepCountIs(input.maxSteps),
          maxRetries: 0, // Temporal retries the activity
          abortSignal: ctx.cancellationSignal,
          onStepFinish: () => void (steps += 1),
        });
        const porcelain = await git.raw(['status', '--porcelain=v1', '-z', '--untracked-files=all']);
        const changes = await collectChanges(root, porcelain);
        const { title, summary } = splitTitle(result.text, `docent: ${input.instruction.prompt.split('\n')[0]}`);
        return { changes, title, summary };
      } catch (err) {
        if (APICallError.isInstance(err) && err.statusCode !== undefined && err.statusCode < 500 && err.statusCode !== 429) {
          throw ApplicationFailure.create({ type: 'ModelRequestRejected', message: `the model provider refused the request (HTTP ${err.statusCode})`, nonRetryable: true });
        }
        throw err;
      } finally {
        clearInterval(beat);
      }
    },
  };
}
