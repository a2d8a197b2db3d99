import { ApplicationFailure } from '@temporalio/activity';
import { costUsd, type PriceTable } from '../../src/jobs/prices';
import { eventKeys } from '../../src/jobs/event-keys';
import type { TurnRecord } from '../../src/jobs/turn-record';
import type { Redact } from '../../src/secrets/redactor';
import { modelStepData, toolStepData, type Timing } from './step-events';
import type { CheckResult, Instruction, TurnCaps } from '../../workflows/agent-job-contract';

/** Where activities write a turn's events and bookkeeping (usage, files, durable steps). */
export interface TurnJournal {
  ledger: TurnRecord;
  prices: PriceTable;
}

type ToolCall = { toolName: string; toolCallId?: string; input: unknown };
type ToolResult = { toolCallId?: string; output: unknown };
type ExecutableTool = { execute?: (input: never, options: { toolCallId: string }) => unknown };

const sameText: Redact = (text) => text;

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
  // A model call runs from the end of the previous step (or the ask) to its first tool call; tools time themselves.
  let stepStart = Date.now();
  const toolTimes = new Map<string, Timing>();
  let redact = sameText;

  return {
    /** Unique per turn attempt: other writers of this turn's events (egress) build their keys on it. */
    keyPrefix: run,
    /** The tools, each call timed for its step event; `secrets` redacts what the events say of arguments and output. */
    timed<T extends Record<string, unknown>>(tools: T, secrets: Redact = sameText): T {
      redact = secrets;
      const wrapped = Object.entries(tools).map(([name, t]) => {
        const execute = (t as ExecutableTool).execute;
        if (!execute) return [name, t];
        const run = async (input: never, options: { toolCallId: string }) => {
          const startedAt = new Date();
          try {
            return await execute(input, options);
          } finally {
            toolTimes.set(options.toolCallId, { startedAt, durationMs: Date.now() - startedAt.getTime() });
          }
        };
        return [name, { ...(t as object), execute: run }];
      });
      return Object.fromEntries(wrapped) as T;
    },
    /** Marks the start of a model call's ask (after setup or checks ran). */
    asking(): void {
      stepStart = Date.now();
    },
    async onStep(step: { toolCalls: ToolCall[]; toolResults?: ToolResult[]; finishReason?: string; usage: { inputTokens: number | undefined; outputTokens: number | undefined } }): Promise<void> {
      const finishedAt = Date.now();
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
      const times = step.toolCalls.map((c) => (c.toolCallId ? toolTimes.get(c.toolCallId) : undefined));
      const firstTool = Math.min(finishedAt, ...times.map((t) => t?.startedAt.getTime() ?? finishedAt));
      const modelTime = { startedAt: new Date(stepStart), durationMs: Math.max(0, firstTool - stepStart) };
      await journal.ledger.recordStep(jobId, turn, eventKeys.modelCall(run, steps), modelStepData(steps, usage, price, step.toolCalls.length, step.finishReason, modelTime));
      for (const [i, call] of step.toolCalls.entries()) {
        const output = step.toolResults?.find((r) => r.toolCallId !== undefined && r.toolCallId === call.toolCallId)?.output;
        await journal.ledger.recordStep(jobId, turn, eventKeys.step(run, steps, i), toolStepData(steps, call, output, times[i], redact));
      }
      stepStart = Date.now();
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
        // The output is already redacted and cut to its last 4 KiB (sandbox-workspace.ts), as the turn's checks keep it.
        const data = {
          kind: c.kind,
          command: c.command,
          exitCode: c.exitCode,
          durationMs: c.durationMs,
          output: c.output,
          ...(c.stoppedBy ? { stoppedBy: c.stoppedBy } : {}),
          ...(c.cache ? { cache: c.cache } : {}),
        };
        await journal.ledger.recordCheck(jobId, turn, eventKeys.check(run, checks), data);
      }
    },
  };
}
