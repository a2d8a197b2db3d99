// The agent job workflow's contract: its input, signals, query, errors and its activities' inputs and results.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { GapCheckSpec } from './docs-gap-check-contract';

/** The workflow id of a job, so a repeated start or a follow-up always finds the same workflow. */
export const agentJobWorkflowId = (jobId: string) => `agent-job-${jobId}`;
/** Job ids as the gateway makes them (job_<hex>), and any plain name: never a separator, never a dot segment. */
export const PLAIN_JOB_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** One instruction for the agent; `turn` orders instructions and guards status writes. */
export interface Instruction {
  prompt: string;
  turn: number;
  /** Earlier instructions of the job, oldest first, so a follow-up has its context. */
  history: string[];
  /** The project's sandbox commands as they were when the instruction was accepted; absent in older histories. */
  checks?: ProjectChecks;
  /** The project's caps when the instruction was accepted; absent in older histories and when none is set. */
  caps?: TurnCaps;
  /** 1 for the first run of a turn, one more for each retry; absent in older histories. */
  attempt?: number;
  /** A retry of a turn whose push succeeded: what it pushed, so only the pull request step runs again. */
  resume?: ResumePoint;
  /** Images shown to the model with the prompt, by reference (the bytes stay in MongoDB); absent in older histories. */
  images?: InstructionImage[];
  /** Set when a pull-request comment gave the instruction: the turn's end answers there; absent in older histories. */
  reply?: PullRequestReply;
  /** The plan a person approved before this edit (plan jobs only): the agent follows it. */
  approvedPlan?: string;
  /** A retried plan turn: the revision its earlier attempts reached, so its plans number on from there. */
  planRevisionBase?: number;
}

/** The pull request whose comment gave an instruction, where the turn's answer goes. */
export interface PullRequestReply {
  /** The job's repository, as the project has it. */
  repository: string;
  /** The forge connection the repository resolved through (src/forges/); absent in older histories: the deployment's. */
  forgeId?: string;
  pullNumber: number;
  /** The pull request's page; a pushed commit is linked under it. */
  pullRequestUrl: string;
  /** The webhook delivery whose comment asked for the turn: a retried handling of it finds this turn instead of starting another. */
  deliveryKey?: string;
  /** `issue`: the comment was on an issue numbered `pullNumber` (GitLab numbers issues apart from merge requests); absent: a pull request. */
  thread?: 'pull' | 'issue';
}

/** An image stored by the gateway (by the SHA-256 of its bytes), or a URL the worker fetches. */
export type InstructionImage = { sha256: string; mimeType: string } | { url: string };

/** Per-project caps (`docent project update --max-turn-tokens/--max-turn-minutes/--max-job-cost-usd`). */
export interface TurnCaps {
  maxTurnTokens?: number;
  maxTurnMinutes?: number;
  maxJobCostUsd?: number;
}

/** The durable steps of a failed turn that a retry does not run again. */
export interface ResumePoint {
  startCommit: string;
  commit: string;
  title: string;
  summary: string;
  checks?: CheckResult[];
  checksPassed?: boolean | null;
}

/** Stops the running turn (if it is this one); the job keeps its branch and takes follow-ups. */
export const stopTurnSignal = defineSignal<[{ turn: number }]>('stopTurn');

/** What a project runs in the sandbox around the agent's edit (`docent project update --setup/--check/--network`). */
export interface ProjectChecks {
  /** Run once before the agent starts, e.g. `npm ci`. */
  setup: string[];
  /** Run after the agent's edit; all must exit 0, e.g. `npm test`. */
  check: string[];
  /** Whether sandboxed commands may use the network, through the worker's egress proxy (default: no network). */
  network: boolean;
  /** With network: the only hosts the proxy lets them reach (`--allow-host`); absent: any public host. */
  allowHosts?: string[];
  /** Whether check commands get the project's secrets too (setup commands always do); only the flag, never a value. */
  secretsToChecks?: boolean;
  /** Whether turns that start from the agent's own commits get the secrets too (the operator's choice); only the flag. */
  secretsForAgentCode?: boolean;
  /** Set when the project names cache key files (`--cache-key`): setup's result is cached per worker under a key. */
  setupCache?: SetupCacheSpec;
}

/** How a project's setup is cached: what goes into the key besides the commands and the sandbox image. */
export interface SetupCacheSpec {
  /** The project's id: entries are never shared between projects. */
  project: string;
  /** Files whose contents at the job's commit go into the key, e.g. package-lock.json. */
  keyFiles: string[];
  /** Bumped by `docent project cache clear`: entries stored under an older one never match again. */
  generation: number;
  /** Run after a restore instead of setup (`--maintenance`), e.g. `npm run build`. */
  maintenance: string[];
}

export interface PreferredSetupWorkerInput {
  projectId: string;
}
export interface PreferredSetupWorkerResult {
  /** The task queue of the worker that last stored or restored the project's setup; absent when none has. */
  workspaceQueue?: string;
}

/** One sandboxed setup or check command as it last ran in a turn. */
export interface CheckResult {
  kind: 'setup' | 'check';
  command: string;
  exitCode: number;
  durationMs: number;
  /** The last 4 KiB of its output. */
  output: string;
  /** Set when docent stopped it: the wall-time limit, the disk limit, or a cancelled turn. */
  stoppedBy?: 'timeout' | 'disk' | 'cancelled';
  /** Setup entries only: restored from the worker's setup cache, run and stored, or run without the cache. */
  cache?: 'hit' | 'miss' | 'off';
}

/** Most context repositories a job may name: the gateway refuses more, and so does the worker (its input is not trusted). */
export const MAX_CONTEXT_REPOSITORIES = 10;

/** A repository the agent may list, read and search beside the job's own, never change (`contextRepositories` on create). */
export interface ContextRepository {
  /** owner/name or a git URL, under the same rules as a project's repository. */
  repo: string;
  /** The forge connection the repository resolved through (src/forges/); absent in older histories: the deployment's. */
  forgeId?: string;
  /** The branch or tag cloned; absent: the repository's default branch. */
  ref?: string;
}

export interface AgentJobInput {
  jobId: string;
  projectId: string;
  /** owner/name or git URL, as the project has it. */
  repository: string;
  /** The forge connection the repository resolved through (src/forges/); absent in older histories: the deployment's. */
  forgeId?: string;
  /** The ref the job's branch starts from. */
  baseRef: string;
  /** The job's own branch, `docent/<jobId>`. */
  branch: string;
  model: string;
  asDraft: boolean;
  /** The first instruction; absent when a follow-up restarts a finished job (the instruction comes as a signal). */
  first?: Instruction;
  heartbeatTimeoutMs: number;
  /** How long a step waits for the worker holding the job's clone before the turn starts over on another (absent: 60 s). */
  cloneWaitMs?: number;
  maxSteps: number;
  /** Set on jobs the gap loop created: after each push, the questions are re-asked against the branch's docs. */
  gapCheck?: GapCheckSpec;
  /** The first turn plans with read-only tools and waits for approval (`requirePlanApproval`) before it edits. */
  requirePlanApproval?: boolean;
  /** Read-only repositories cloned beside the job's (absent in older histories and when none). */
  contextRepositories?: ContextRepository[];
  /** The namespace has the DocentJobStatus search attribute: the workflow keeps it at the job's status (absent: it has none to set). */
  jobStatusAttribute?: boolean;
}

/** A follow-up instruction for a running job. */
export const followUpSignal = defineSignal<[Instruction]>('followUp');

export interface AgentJobProgress {
  turn: number;
  stage: 'waiting' | 'preparing' | 'planning' | 'awaiting-approval' | 'editing' | 'pushing' | 'opening-pull-request' | 'done';
}

/** Approves the plan the job awaits approval of; refused (the update's validator) when no plan awaits. */
export const approvePlanUpdate = defineUpdate<PlanDecision, [{ turn: number; revision?: number }]>('approvePlan');

/** Asks for a new plan with the person's feedback; refused when no plan awaits. Answers the revision being made. */
export const revisePlanUpdate = defineUpdate<PlanDecision, [{ turn: number; feedback: string }]>('revisePlan');

/** A plan decision the workflow took, written to the job before it answers (by workflows started since that change). */
export interface PlanDecision {
  revision: number;
}

export interface RecordPlanRevisionAskedInput {
  jobId: string;
  turn: number;
  revision: number;
  feedback: string;
}

/** The reason an approve or a revision is refused: the gateway maps it to failed_precondition. */
export const NO_PLAN_AWAITS = 'NoPlanAwaits';

/** What the agent step gets, for the read-only planner that runs before it. */
export interface PlanChangeInput extends Omit<RunAgentInput, 'move'> {
  /** 1 for the first plan, one more per revision. */
  revision: number;
  /** The plans so far and the feedback on each, oldest first: a revision answers the latest feedback. */
  revisions: Array<{ plan: string; feedback: string }>;
}
export interface PlanChangeResult {
  /** Markdown, at most the planner's cap (activities/agent-job/planner.ts). */
  plan: string;
}

export interface RecordPlanInput {
  jobId: string;
  turn: number;
  revision: number;
  plan: string;
}

export interface RecordPlanApprovedInput {
  jobId: string;
  turn: number;
  revision: number;
}

/** Where the job is, for operators in the Temporal UI and for `docent jobs watch`. */
export const progressQuery = defineQuery<AgentJobProgress>('progress');

/** Failures that retrying cannot fix; activities throw ApplicationFailure with these types. */
export const NON_RETRYABLE_AGENT_ERRORS = [
  'RepositoryNotFound',
  'RefNotFound',
  'RepositoryAccessDenied',
  'AgentLimitExceeded',
  'ModelRequestRejected',
  'PullRequestRejected',
  'RepositoryUrlRefused',
  'SandboxUnavailable',
  'BudgetExceeded',
] as const;
export type AgentErrorType = (typeof NON_RETRYABLE_AGENT_ERRORS)[number];

/** A file the agent wrote (content) or deleted (null), relative to the repository root. */
export interface FileChange {
  path: string;
  /** The new content (UTF-8, or base64 per `encoding`), a symlink's target, or null when the file was deleted. */
  content: string | null;
  encoding?: 'base64';
  mode?: 'executable' | 'symlink';
}

export interface PrepareWorkspaceInput {
  jobId: string;
  repository: string;
  /** The forge connection the repository resolved through (src/forges/); absent in older histories: the deployment's. */
  forgeId?: string;
  baseRef: string;
  branch: string;
  /** The turn about to run: a branch head that is this turn's own commit (pushed by an attempt that died) is started before. */
  turn?: number;
}
export interface PrepareWorkspaceResult {
  /** The commit the agent starts from: the job branch's head if it exists, else the base ref's. */
  startCommit: string;
  /** The task queue only the worker holding this clone polls (absent from workers older than it): the turn's next steps go there. */
  workspaceQueue?: string;
}

export interface RunAgentInput {
  jobId: string;
  repository: string;
  /** The forge connection the repository resolved through (src/forges/); absent in older histories: the deployment's. */
  forgeId?: string;
  startCommit: string;
  instruction: Instruction;
  model: string;
  maxSteps: number;
  /** Which worker of the turn this is (absent: the first); a turn moved off a vanished worker records its steps apart. */
  move?: number;
  /** The job's read-only context repositories, cloned beside its clone on this worker (absent in older histories). */
  contextRepositories?: ContextRepository[];
}
export interface RunAgentResult {
  changes: FileChange[];
  /** One line for the commit and the pull request title. */
  title: string;
  /** The agent's account of what it did, for the pull request body. */
  summary: string;
  /** The project's setup and check commands as they last ran; absent in older histories. */
  checks?: CheckResult[];
  /** Whether every command passed; null when the project has none. */
  checksPassed?: boolean | null;
}

export interface CommitAndPushInput {
  jobId: string;
  repository: string;
  /** The forge connection the repository resolved through (src/forges/); absent in older histories: the deployment's. */
  forgeId?: string;
  branch: string;
  startCommit: string;
  changes: FileChange[];
  title: string;
  turn: number;
}
export interface CommitAndPushResult {
  /** The pushed commit, or null when the changes left the tree as it was. */
  commit: string | null;
}

export interface OpenPullRequestInput {
  repository: string;
  /** The forge connection the repository resolved through (src/forges/); absent in older histories: the deployment's. */
  forgeId?: string;
  branch: string;
  baseRef: string;
  title: string;
  body: string;
  draft: boolean;
  /** Listed in the body; failing ones named first. */
  checks?: CheckResult[];
  /** Absent in older histories. */
  jobId?: string;
  turn?: number;
}
export interface OpenPullRequestResult {
  url: string;
  number: number;
}

/** The project's checks of one pushed commit, shown on GitHub: a check run (App) or a commit status (token). */
export interface ReportChecksInput {
  repository: string;
  /** The forge connection the repository resolved through (src/forges/); absent in older histories: the deployment's. */
  forgeId?: string;
  /** The pushed head commit the checks ran on. */
  commit: string;
  checks: CheckResult[];
}
export interface ReportChecksResult {
  /** `check-run` or `commit-status`; `none` when GitHub refused it (the job goes on without). */
  reported: 'check-run' | 'commit-status' | 'none';
}

export interface RecordJobStatusInput {
  jobId: string;
  turn: number;
  status: 'completed' | 'failed';
  /** The turn's own status when it differs from the job's: `stopped` (the job reads failed, code stopped). */
  turnStatus?: 'stopped';
  /** Set on completion with a pull request; left as it was when undefined. */
  prLink?: string;
  error?: { code: string; message: string };
  checks?: CheckResult[];
  checksPassed?: boolean | null;
}

/** How a turn that a pull-request comment gave ended, for the answer on the pull request. */
export type TurnEnding =
  | { kind: 'pushed'; commit: string; title: string; summary: string; checksPassed?: boolean | null }
  | { kind: 'unchanged'; summary: string }
  | { kind: 'failed'; error: { code: string; message: string } };

export interface AnswerPullRequestInput {
  jobId: string;
  turn: number;
  /** The turn's attempt (absent: the first): a retried turn answers again. */
  attempt?: number;
  reply: PullRequestReply;
  ending: TurnEnding;
}
