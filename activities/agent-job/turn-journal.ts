import { ApplicationFailure } from '@temporalio/activity';
import { costUsd, type PriceTable } from '../../src/jobs/prices';
import { eventKeys } from '../../src/jobs/event-keys';
import type { TurnRecord } from '../../src/jobs/turn-record';
import type { CheckResult, Instruction, TurnCaps } from '../../workflows/agent-job-contract';

/** Where activities write a turn's events and bookkeeping (usage, files, durable steps). */
export interface TurnJournal {
  ledger: TurnRecord;
  prices: PriceTable;
}

type ToolCall = { toolName: string; input: unknown };

/** What a step event may say about a tool call: its name and the path it touched, never contents or commands. */
export function stepData(call: ToolCall): { tool: string; path?: string } {
  const input = (call.input ?? {}) as Record<string, unknown>;
  const where = typeof input.path === 'string' ? input.path : typeof input.folder === 'string' ? input.folder : undefined;
  return { tool: call.toolName, ...(where !== undefined ? { path: where.slice(0, 500) } : {}) };
}

export function budgetExceeded(message: string): never {
  throw ApplicationFailure.create({ type: 'BudgetExceeded', message, nonRetryable: true });
}

/**
 * Follows one attempt of an agent turn: records each model step's tool calls and usage as it happens, and says when a
 * cap is reached, so the tool loop can stop after the step that crossed it.
 */
export async function followTurn(journal: TurnJournal | undefined, jobId: string, model: string, instruction: Instruction, activityAttempt: number, move = 1, planRevision?: number) {
  const caps: TurnCaps = instruction.caps ?? {};
  const turn = instruction.turn;
  const run = eventKeys.run(turn, instruction.attempt ?? 1, activityAttempt, move, planRevision);
  const before = journal ? await journal.ledger.turns.get(jobId, turn) : null;
  // Every accepted turn has a record or is implied by its job: this one's create was refused (its start landed anyway).
  if (journal && !before) throw ApplicationFailure.create({ type: 'TurnNotAccepted', message: `job ${jobId} has no turn ${turn}: its instruction was refused`, nonRetryable: true });
  const jobCostBefore = journal && caps.maxJobCostUsd !== undefined ? await journal.ledger.turns.jobCostUsd(jobId) : 0;
  let tokens = (before?.usage.inputTokens ?? 0) + (before?.usage.outputTokens ?? 0);
  let cost = 0;
  let steps = 0;
  let checks = 0;
  let exceeded: string | undefined;

  return {
    /** Unique per turn attempt: other writers of this turn's events (egress) build their keys on it. */
    keyPrefix: run,
    async onStep(step: { toolCalls: ToolCall[]; usage: { inputTokens: number | undefined; outputTokens: number | undefined } }): Promise<void> {
      steps += 1;
      const usage = { inputTokens: step.usage.inputTokens ?? 0, outputTokens: step.usage.outputTokens ?? 0 };
      const price = journal ? costUsd(journal.prices, model, usage) : undefined;
      tokens += usage.inputTokens + usage.outputTokens;
      cost += price ?? 0;
      if (caps.maxTurnTokens !== undefined && tokens >= caps.maxTurnTokens) exceeded = `the turn used ${tokens} tokens, reaching the project's cap of ${caps.maxTurnTokens}`;
      if (caps.maxJobCostUsd !== undefined && jobCostBefore + cost >= caps.maxJobCostUsd)
        exceeded = `the job cost $${(jobCostBefore + cost).toFixed(4)}, reaching the project's cap of $${caps.maxJobCostUsd}`;
      if (!journal) return;
      await journal.ledger.recordUsage(jobId, turn, { ...usage, ...(price !== undefined ? { costUsd: price } : {}) });
      for (const [i, call] of step.toolCalls.entries()) {
        await journal.ledger.recordStep(jobId, turn, eventKeys.step(run, steps, i), stepData(call));
      }
    },
    /** A stop condition for the tool loop: true once a cap is reached. */
    overBudget: () => exceeded !== undefined,
    /** Fails the turn with budget_exceeded when a cap was reached. */
    assertWithinBudget(): void {
      if (exceeded) budgetExceeded(exceeded);
    },
    async onChecks(results: CheckResult[]): Promise<void> {
      if (!journal) return;
      for (const c of results) {
        checks += 1;
        const data = { kind: c.kind, command: c.command, exitCode: c.exitCode, durationMs: c.durationMs, ...(c.stoppedBy ? { stoppedBy: c.stoppedBy } : {}), ...(c.cache ? { cache: c.cache } : {}) };
        await journal.ledger.recordCheck(jobId, turn, eventKeys.check(run, checks), data);
      }
    },
  };
}
