import { Context } from '@temporalio/activity';
import { generateText, stepCountIs, type ModelMessage, type UserModelMessage } from 'ai';
import { catalogEntry, type CatalogModel } from '../../src/llm/model-catalog';
import type { PlanChangeInput, PlanChangeResult } from '../../workflows/agent-job-contract';
import { checkoutClean, workspacePath, type GitDeps } from './git';
import { instructionImageParts, type ImageDeps } from './instruction-images';
import { jobLanguageModel, modelFailure } from './model-failures';
import { followTurn, type TurnJournal } from './turn-journal';
import { defaultToolLimits, workspaceTools } from './workspace-tools';
import { turnSystemPrompt } from './project-instructions';
import { contextNote, ensureContextClones } from './context-clones';

export interface PlannerDeps extends GitDeps {
  models: CatalogModel[];
  journal?: TurnJournal;
  images?: ImageDeps;
}

/** The longest plan kept: it travels in workflow history, the job document, a webhook and the edit turn's prompt. */
export const maxPlanChars = 16 * 1024;

const plannerPrompt = `You are docent's coding agent, planning a change before anyone lets you make it.
Use the tools to read the repository; you cannot change it. Then answer with the plan only, in Markdown: the files
you will change or create and what you will do in each, in order, and how the change can be checked.
Keep it short: a person reads it and approves it before you edit.`;

/** The plan as kept: trimmed, never empty, cut at maxPlanChars with a note a reader sees. */
export function boundedPlan(text: string): string {
  const plan = text.trim() || '(the agent answered with no plan)';
  if (plan.length <= maxPlanChars) return plan;
  const note = `\n\n… (plan cut at ${maxPlanChars} characters)`;
  return plan.slice(0, maxPlanChars - note.length) + note;
}

/** The conversation of a plan: the instruction, then each earlier plan and the feedback that asked for another. */
function planningMessages(input: PlanChangeInput, opening: UserModelMessage['content']): ModelMessage[] {
  const messages: ModelMessage[] = [{ role: 'user', content: opening }];
  for (const r of input.revisions) {
    messages.push({ role: 'assistant', content: r.plan }, { role: 'user', content: `Revise the plan with this feedback: ${r.feedback}` });
  }
  return messages;
}

export function createPlannerActivities(deps: PlannerDeps) {
  return {
    /**
     * Writes a plan for the instruction with read-only tools (list, read, search) on a clean checkout of startCommit:
     * no command runs and no file changes, so a plan job changes nothing before its plan is approved. Retry-safe.
     */
    async planChange(input: PlanChangeInput): Promise<PlanChangeResult> {
      const ctx = Context.current();
      const model = jobLanguageModel(deps.models, input.model);
      const git = await checkoutClean(deps, input.jobId, input, input.startCommit);
      const root = workspacePath(deps, input.jobId);
      const context = await ensureContextClones(deps, input.jobId, input.contextRepositories);
      const { list_files, read_file, search_files } = workspaceTools(root, defaultToolLimits, undefined, context);
      const baseRef = (await deps.journal?.ledger.jobs.byId(input.jobId))?.source.ref;
      const system = await turnSystemPrompt(plannerPrompt, git, baseRef, deps.journal, input.jobId, input.instruction.turn);
      const follow = await followTurn(deps.journal, input.jobId, input.model, input.instruction, ctx.info.attempt, 1, input.revision);
      const beat = setInterval(() => ctx.heartbeat(), 1000);
      try {
        const pictures = await instructionImageParts(deps.images, input.instruction.images, ctx.cancellationSignal, catalogEntry(deps.models, input.model));
        const history = input.instruction.history.map((p, i) => `Earlier instruction ${i + 1} (already done on this branch): ${p}`);
        const opening = [...history, `Instruction: ${input.instruction.prompt}`, contextNote(context, false)].filter(Boolean).join('\n\n');
        // Timed for the step events; the planner's tools read only the clone and context repositories (no secrets there).
        const tools = follow.timed({ list_files, read_file, search_files });
        follow.asking();
        const result = await generateText({
          model,
          system,
          messages: planningMessages(input, pictures.length ? [{ type: 'text', text: opening }, ...pictures] : opening),
          tools,
          stopWhen: [stepCountIs(input.maxSteps), follow.overBudget],
          maxRetries: 0, // Temporal retries the activity
          abortSignal: ctx.cancellationSignal,
          onStepFinish: (step) => follow.onStep(step),
        });
        follow.assertWithinBudget();
        return { plan: boundedPlan(result.text) };
      } catch (err) {
        throw modelFailure(err) ?? err;
      } finally {
        clearInterval(beat);
      }
    },
  };
}
