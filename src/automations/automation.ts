// An automation: a trigger, an instruction and an output, owned by a project (docs/automations.md).
import type { JobOrigin } from '../jobs/job';

export type AutomationTrigger =
  | { type: 'schedule'; cron: string; timeZone: string }
  | { type: 'push'; repo?: string; branch: string }
  | { type: 'merged_pull_request'; repo: string }
  | { type: 'issue'; label?: string }
  | { type: 'unanswered_questions'; threshold: number; includeRestricted?: boolean }
  | { type: 'manual' };

export type AutomationOutput = 'pull_request' | 'update_pull_request';

/** What a caller sets on an automation (create, or update in part). */
export interface AutomationSpec {
  name: string;
  trigger: AutomationTrigger;
  instruction: string;
  output: AutomationOutput;
  contextRepositories?: Array<{ repo: string; ref?: string }>;
  requirePlanApproval?: boolean;
  model?: string;
}

export interface AutomationDoc extends AutomationSpec {
  _id: string;
  projectId: string;
  paused: boolean;
  /** Runs in a row whose job could not be started; a started job sets it back to 0. */
  consecutiveFailures: number;
  lastError: { message: string; at: Date } | null;
  /** An unanswered_questions automation's latest check, whether or not it started a run (src/automations/gap-trigger.ts). */
  lastCheck?: GapCheckRecord;
  createdAt: Date;
  updatedAt: Date;
}

/** One check of an unanswered_questions automation: the readers whose questions failed since `since`, and the run it started if any. */
export interface GapCheckRecord {
  at: Date;
  since: Date;
  /** Unanswered or down-rated questions in the window. */
  questions: number;
  /** The readers who asked them: what the threshold counts (absent on checks made before it did). */
  readers?: number;
  threshold: number;
  runId: string | null;
  /** Why no run started: below the threshold, or the project has no documentation domain. */
  reason?: string;
}

/** `started`: a job; `refused`: paused or over a cap; `failed`: the job could not be admitted; `starting`: in flight. */
export type RunStatus = 'starting' | 'started' | 'refused' | 'failed';

/** One event an automation answered: at most one per (automationId, eventKey). */
export interface AutomationRunDoc {
  _id: string;
  automationId: string;
  projectId: string;
  eventKey: string;
  origin: JobOrigin;
  status: RunStatus;
  jobId?: string;
  /** The job's turn the run started: 1 for a new job, more for a follow-up of an update_pull_request automation. */
  turn?: number;
  reason?: string;
  createdAt: Date;
}

/** The origin a run of this trigger gives its job; a manual trigger's run is `automation_manual`. */
export function originOfTrigger(trigger: AutomationTrigger): JobOrigin {
  return trigger.type === 'manual' ? 'automation_manual' : trigger.type;
}

export function automationToJson(doc: AutomationDoc) {
  return {
    id: doc._id,
    name: doc.name,
    trigger: doc.trigger,
    instruction: doc.instruction,
    output: doc.output,
    contextRepositories: doc.contextRepositories ?? [],
    requirePlanApproval: doc.requirePlanApproval ?? false,
    model: doc.model ?? null,
    paused: doc.paused,
    consecutiveFailures: doc.consecutiveFailures,
    lastError: doc.lastError ? { message: doc.lastError.message, at: doc.lastError.at.toISOString() } : null,
    ...(doc.lastCheck
      ? {
          lastCheck: {
            ...doc.lastCheck,
            at: doc.lastCheck.at.toISOString(),
            since: doc.lastCheck.since.toISOString(),
            readers: doc.lastCheck.readers ?? doc.lastCheck.questions,
            reason: doc.lastCheck.reason ?? null,
          },
        }
      : {}),
    createdAt: doc.createdAt.toISOString(),
    updatedAt: doc.updatedAt.toISOString(),
  };
}

export function runToJson(doc: AutomationRunDoc) {
  return {
    id: doc._id,
    eventKey: doc.eventKey,
    origin: doc.origin,
    status: doc.status,
    jobId: doc.jobId ?? null,
    turn: doc.turn ?? null,
    reason: doc.reason ?? null,
    createdAt: doc.createdAt.toISOString(),
  };
}
