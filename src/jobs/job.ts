import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { ImageRef } from './job-images';
import { create } from '@bufbuild/protobuf';
import { AgentJobEventSchema, AgentJobSchema, AgentJobStatus, type AgentJob } from '../gen/agent/v2/agent_pb';
import type { CheckResult, ContextRepository } from '../../workflows/agent-job-contract';
import type { GapAnswer, GapCheckResult } from '../../workflows/docs-gap-check-contract';
import type { JobEvent } from './job-events';
import type { TurnDoc } from './job-turns';

export type JobStatus = 'active' | 'completed' | 'archived' | 'failed';

/** Where a job came from: an API call, or what an automation answered (docs/automations.md). */
export const jobOrigins = ['api', 'pull_request_comment', 'issue', 'schedule', 'push', 'merged_pull_request', 'unanswered_questions', 'automation_manual'] as const;
export type JobOrigin = (typeof jobOrigins)[number];

/** A job as stored in MongoDB, the system of record. */
export interface JobDoc {
  _id: string;
  projectId: string;
  status: JobStatus;
  source: { repository: string; ref: string };
  model: string;
  branch: string;
  prLink: string | null;
  createdAt: Date;
  updatedAt: Date;
  archivedAt: Date | null;
  error?: { code: string; message: string };
  /** The latest claimed turn (a cache of the turn records; src/jobs/job-state.ts); status writes name the turn they finish. */
  turn: number;
  /** The first instruction (and, for jobs older than insert-claimed turns, the follow-ups); later ones live in job_turns. */
  /** `images`: what the create's images are stored as (src/jobs/job-images.ts). */
  prompts: Array<{ turn: number; prompt: string; at: Date; images?: ImageRef[] }>;
  asDraft: boolean;
  /** Turn 1's record and opening events are derived from this document until a writer stores them (src/jobs/first-turn.ts). */
  firstTurnImplied?: boolean;
  /** `<projectId>:<Idempotency-Key>`, unique, so a retried create finds its job. */
  idempotencyKey?: string;
  /** The latest turn's sandboxed setup and check commands; cleared when a turn begins. */
  checks?: CheckResult[];
  /** Whether they all passed; null when the project has none (or the turn has not finished). */
  checksPassed?: boolean | null;
  /** Gap-loop jobs: the questions they answer and the threads those came from (`docent gaps fix`). */
  gap?: GapSpec;
  /** Gap-loop jobs: the latest re-ask of the questions against the pushed branch's docs. */
  gapCheck?: GapCheckResult;
  /** The first turn plans with read-only tools and edits only once a person approves the plan. */
  requirePlanApproval?: boolean;
  /** The latest plan (Markdown) and its revision (1, then one more per revision asked). */
  plan?: string;
  planRevision?: number;
  /** Where the plan is: awaiting approval, being revised after feedback, or approved (the edit goes on). */
  planStatus?: PlanStatus;
  /** Where it came from; jobs created before origins were stored read as `api` (originOf). */
  origin?: JobOrigin;
  /** The automation whose run started it. */
  automationId?: string;
  /** Read-only repositories the agent may list, read and search beside the job's own (at most 10). */
  contextRepositories?: ContextRepository[];
  /** The forge connection whose credential the job's clones, pushes and pull requests use (src/forges/); absent: the deployment's. */
  forgeId?: string;
  /** The GitHub issue the job answers (an `issue` automation): its pull request closes it, and the issue hears of it. */
  issue?: JobIssue;
}

/** An issue in the job's own repository: `owner/name` as GitHub spells it, its number and page. */
export interface JobIssue {
  repository: string;
  number: number;
  url: string;
}

/** A context repository as a job shows it: what the caller named (the connection it resolved through is the job's business). */
const shownContext = (r: ContextRepository) => (r.ref ? { repo: r.repo, ref: r.ref } : { repo: r.repo });

/** A job's origin; every job before origins were stored came from an API call (PR comments only continued jobs). */
export const originOf = (doc: Pick<JobDoc, 'origin'>): JobOrigin => doc.origin ?? 'api';

/** How much of the first instruction a job shows (lists show it; the whole one is in the job's turns). */
export const maxShownInstructionChars = 280;

/** The job's first instruction, cut for lists. */
export const instructionOf = (doc: Pick<JobDoc, 'prompts'>): string => {
  const first = doc.prompts?.find((p) => p.turn === 1)?.prompt ?? '';
  return first.length > maxShownInstructionChars ? `${first.slice(0, maxShownInstructionChars)}…` : first;
};

export type PlanStatus = 'awaiting' | 'revising' | 'approved';

/** Whether the job waits for a person to approve its plan now: only an active job does. */
export const awaitsApproval = (doc: Pick<JobDoc, 'status' | 'planStatus'>) => doc.status === 'active' && doc.planStatus === 'awaiting';

/** Whether the agent is still writing the plan of a plan job (its first, or a revised one): nothing to approve yet. */
export const writesPlan = (doc: Pick<JobDoc, 'status' | 'turn' | 'requirePlanApproval' | 'planStatus'>) =>
  doc.requirePlanApproval === true && doc.status === 'active' && doc.turn === 1 && (doc.planStatus === undefined || doc.planStatus === 'revising');

/** What a gap-loop job answers: the questions, the threads they came from, and where the docs are. */
export interface GapSpec {
  domain: string;
  questions: string[];
  threadIds: string[];
  docsPath?: string;
  baseUrl: string;
}

/** The REST shape of an agent job (docs/agent-jobs.md; docs/decisions/2026-11-21-agent-jobs.md). */
export function jobToJson(doc: JobDoc) {
  return {
    id: doc._id,
    status: doc.status,
    source: doc.source,
    model: doc.model,
    prLink: doc.prLink,
    createdAt: doc.createdAt.toISOString(),
    archivedAt: doc.archivedAt?.toISOString() ?? null,
    updatedAt: doc.updatedAt.toISOString(),
    branch: doc.branch,
    turn: doc.turn,
    checks: doc.checks ?? [],
    checksPassed: doc.checksPassed ?? null,
    origin: originOf(doc),
    instruction: instructionOf(doc),
    ...(doc.automationId ? { automationId: doc.automationId } : {}),
    ...(doc.error ? { error: doc.error } : {}),
    ...(doc.gap ? { gap: { domain: doc.gap.domain, questions: doc.gap.questions, threadIds: doc.gap.threadIds } } : {}),
    ...(doc.gapCheck ? { gapCheck: doc.gapCheck } : {}),
    ...(doc.requirePlanApproval ? { requirePlanApproval: true, awaitingApproval: awaitsApproval(doc), plan: doc.plan ?? null, planRevision: doc.planRevision ?? 0 } : {}),
    ...(doc.contextRepositories?.length ? { contextRepositories: doc.contextRepositories.map(shownContext) } : {}),
    forgeId: doc.forgeId ?? 'deployment',
  };
}

const statusToProto: Record<JobStatus, AgentJobStatus> = {
  active: AgentJobStatus.ACTIVE,
  completed: AgentJobStatus.COMPLETED,
  archived: AgentJobStatus.ARCHIVED,
  failed: AgentJobStatus.FAILED,
};

const checkToMessage = (c: CheckResult) => ({ ...c, durationMs: BigInt(c.durationMs) });

function turnToMessage(t: TurnDoc) {
  return {
    turn: t.turn,
    prompt: t.prompt,
    model: t.model,
    status: t.status,
    startedAt: timestampFromDate(t.startedAt),
    finishedAt: t.finishedAt ? timestampFromDate(t.finishedAt) : undefined,
    filesChanged: t.filesChanged,
    inputTokens: BigInt(t.usage.inputTokens),
    outputTokens: BigInt(t.usage.outputTokens),
    costUsd: t.usage.costUsd,
    checks: (t.checks ?? []).map(checkToMessage),
    error: t.error,
    prLink: t.prLink ?? undefined,
    projectInstructions:
      t.projectInstructions &&
      ('refused' in t.projectInstructions ? { path: t.projectInstructions.path, refused: t.projectInstructions.refused } : { ...t.projectInstructions, bytes: BigInt(t.projectInstructions.bytes) }),
  };
}

// REST's nulls are unset fields here; the timestamp is the REST string parsed.
function gapCheckToMessage(g: GapCheckResult) {
  const answer = (a: GapAnswer) => ({ relevance: a.relevance ?? undefined, answered: a.answered, topPath: a.topPath ?? undefined });
  return {
    turn: g.turn,
    commit: g.commit,
    previewIndex: g.previewIndex,
    checkedAt: timestampFromDate(new Date(g.checkedAt)),
    questions: g.questions.map((q) => ({ question: q.question, before: answer(q.before), after: answer(q.after) })),
    fixed: g.fixed,
  };
}

export function eventToMessage(e: JobEvent) {
  return create(AgentJobEventSchema, { id: BigInt(e.id), type: e.type, turn: e.turn, at: timestampFromDate(new Date(e.at)), dataJson: JSON.stringify(e.data) });
}

export function jobToMessage(doc: JobDoc, turns: TurnDoc[] = []): AgentJob {
  return create(AgentJobSchema, {
    id: doc._id,
    status: statusToProto[doc.status],
    source: doc.source,
    model: doc.model,
    prLink: doc.prLink ?? undefined,
    createdAt: timestampFromDate(doc.createdAt),
    archivedAt: doc.archivedAt ? timestampFromDate(doc.archivedAt) : undefined,
    updatedAt: timestampFromDate(doc.updatedAt),
    branch: doc.branch,
    turn: doc.turn,
    error: doc.error,
    checks: (doc.checks ?? []).map(checkToMessage),
    checksPassed: doc.checksPassed ?? undefined,
    turns: turns.map(turnToMessage),
    // The same gap-loop fields as the REST job: docsPath and baseUrl stay internal.
    gap: doc.gap ? { domain: doc.gap.domain, questions: doc.gap.questions, threadIds: doc.gap.threadIds } : undefined,
    gapCheck: doc.gapCheck ? gapCheckToMessage(doc.gapCheck) : undefined,
    requirePlanApproval: doc.requirePlanApproval ?? false,
    awaitingApproval: awaitsApproval(doc),
    plan: doc.plan,
    planRevision: doc.planRevision ?? 0,
    origin: originOf(doc),
    instruction: instructionOf(doc),
    automationId: doc.automationId,
    contextRepositories: (doc.contextRepositories ?? []).map(shownContext),
  });
}
