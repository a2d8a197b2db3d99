import { ApplicationFailure, CancellationScope, condition, patched, setHandler } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import {
  approvePlanUpdate,
  followUpSignal,
  NO_PLAN_AWAITS,
  progressQuery,
  revisePlanUpdate,
  stopTurnSignal,
  type AgentJobInput,
  type AgentJobProgress,
  type Instruction,
  type PlanDecision,
} from '../agent-job-contract';
import { AGENT_JOB_PATCHES } from '../agent-job-patches';

/** A person's answer to a plan; `recorded`: the update wrote it to the job itself, so the plan loop writes nothing more. */
export type Decision = ({ approved: true } | { approved: false; feedback: string }) & { recorded: boolean };

/**
 * What the job's handlers (follow-up, stop, progress, approve and revise) share with its turns: the instructions
 * waiting, the turn running and its stage, turns asked to stop, and the plan awaiting a decision.
 */
export class JobHandlers {
  readonly pending: Instruction[];
  private progress: AgentJobProgress;
  // Turns a client asked to stop: one that has not begun yet ends stopped as soon as it would begin.
  private readonly stopRequested = new Set<number>();
  // Each turn runs in a scope of its own, so a stop cancels that turn and leaves the job (and its workflow) alive.
  private turnScope: { turn: number; scope: CancellationScope } | undefined;
  // The plan a person may approve or send back now (set from the moment it is written, before it is shown).
  private awaiting: { turn: number; revision: number } | undefined;
  private decision: Decision | undefined;

  constructor(
    private readonly input: AgentJobInput,
    private readonly status: Pick<Activities, 'recordPlanApproved' | 'recordPlanRevisionAsked'>,
  ) {
    this.pending = input.first ? [input.first] : [];
    this.progress = { turn: input.first?.turn ?? 0, stage: 'waiting' };
    setHandler(followUpSignal, (instruction) => {
      this.stopRequested.delete(instruction.turn); // a retry of a stopped turn runs again
      this.pending.push(instruction);
    });
    setHandler(progressQuery, () => this.progress);
    setHandler(stopTurnSignal, ({ turn }) => {
      this.stopRequested.add(turn);
      if (this.turnScope?.turn === turn) this.turnScope.scope.cancel();
    });
    setHandler(approvePlanUpdate, () => this.decide({ approved: true }), { validator: ({ turn, revision }) => this.refuseUnlessAwaiting(turn, revision) });
    setHandler(revisePlanUpdate, ({ feedback }) => this.decide({ approved: false, feedback }), { validator: ({ turn }) => this.refuseUnlessAwaiting(turn) });
  }

  /** The scope the turn runs in, already cancelled if a stop for it came first. */
  beginTurn(turn: number): CancellationScope {
    const scope = new CancellationScope();
    this.turnScope = { turn, scope };
    if (this.stopRequested.has(turn)) scope.cancel();
    return scope;
  }

  endTurn(): void {
    this.turnScope = undefined;
    this.awaiting = undefined;
  }

  stage(turn: number, stage: AgentJobProgress['stage']): void {
    this.progress = { turn, stage };
  }

  /** From now on a person may approve or revise this plan (before it is shown, so no answer comes too early). */
  offerPlan(turn: number, revision: number): void {
    this.awaiting = { turn, revision };
    this.decision = undefined;
  }

  /** Waits, for days if need be, for the decision on the plan offered last. */
  async decided(): Promise<Decision> {
    await condition(() => this.decision !== undefined);
    return this.decision!;
  }

  private refuseUnlessAwaiting(turn: number, revision?: number): void {
    const { awaiting } = this;
    if (!awaiting || awaiting.turn !== turn || (revision !== undefined && awaiting.revision !== revision))
      throw ApplicationFailure.create({ type: NO_PLAN_AWAITS, message: 'no plan awaits approval', nonRetryable: true });
  }

  /**
   * Takes a decision and records it on the job before the person hears back, so the job they read next shows it and
   * nobody else writes it. Workflows started before (no marker) answer at once; their plan loop records an approval.
   */
  private async decide(d: { approved: true } | { approved: false; feedback: string }): Promise<PlanDecision> {
    const { turn, revision } = this.awaiting!;
    const { jobId } = this.input;
    const recorded = patched(AGENT_JOB_PATCHES.planDecisionsRecordedByWorkflow);
    this.awaiting = undefined;
    this.decision = { ...d, recorded };
    if (!recorded) return { revision };
    if (d.approved) await this.status.recordPlanApproved({ jobId, turn, revision });
    else await this.status.recordPlanRevisionAsked({ jobId, turn, revision, feedback: d.feedback });
    return { revision };
  }
}
