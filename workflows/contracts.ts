// Names and types shared by workflows, activities, the worker and the gateway: types, constants, signal and query definitions.
import { defineQuery, defineSignal } from '@temporalio/workflow';

/** Task queue of agent job workflows and their activities. */
export const AGENT_TASK_QUEUE = 'docent-agent';
/** Task queue of documentation ingestion workflows and their activities. */
export const DOCS_TASK_QUEUE = 'docent-docs';
/** Task queue of webhook delivery workflows and their activities: outbound HTTP apart from the agent's work. */
export const WEBHOOK_TASK_QUEUE = 'docent-webhooks';
/** Every queue a docent worker serves. */
export const TASK_QUEUES = [AGENT_TASK_QUEUE, DOCS_TASK_QUEUE, WEBHOOK_TASK_QUEUE] as const;

/** Deployments (or test runs) sharing one Temporal namespace keep apart by a queue prefix. */
export function taskQueueName(prefix: string, queue: (typeof TASK_QUEUES)[number]): string {
  return prefix + queue;
}

/** The Keyword search attribute operators filter jobs by in the Temporal UI. */
export const PROJECT_SEARCH_ATTRIBUTE = 'DocentProjectId';

export interface WorkerSelfCheckInput {
  /** Who asked, shown in the Temporal UI's input column. */
  requestedBy: string;
}

export interface DependencyCheck {
  ok: boolean;
  error?: string;
}

export interface WorkerSelfCheckResult {
  /** The worker that ran the check, as Temporal knows it. */
  workerIdentity: string;
  taskQueue: string;
  mongodb: DependencyCheck;
  elasticsearch: DependencyCheck;
}

// ---- agent jobs --------------------------------------------------------------------------------

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
}

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
}

export interface AgentJobInput {
  jobId: string;
  projectId: string;
  /** owner/name or git URL, as the project has it. */
  repository: string;
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
}

/** A follow-up instruction for a running job. */
export const followUpSignal = defineSignal<[Instruction]>('followUp');

export interface AgentJobProgress {
  turn: number;
  stage: 'waiting' | 'preparing' | 'editing' | 'pushing' | 'opening-pull-request' | 'done';
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
  baseRef: string;
  branch: string;
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
  startCommit: string;
  instruction: Instruction;
  model: string;
  maxSteps: number;
  /** Which worker of the turn this is (absent: the first); a turn moved off a vanished worker records its steps apart. */
  move?: number;
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

// ---- webhooks ------------------------------------------------------------------------------------

/** One webhook message (Standard Webhooks): its id is the `webhook-id` every attempt sends. */
export interface WebhookDeliveryInput {
  messageId: string;
  projectId: string;
  type: string;
  /** The JSON body, exactly as signed and sent. */
  payload: string;
  /** The endpoints subscribed when the event happened. */
  endpointIds: string[];
}

export interface DeliverWebhookInput {
  messageId: string;
  endpointId: string;
  type: string;
  payload: string;
}

/** The workflow id of a message's delivery, so an event recorded twice is delivered once. */
export const webhookDeliveryWorkflowId = (messageId: string) => `webhook-${messageId}`;

// ---- documentation ingestion -----------------------------------------------------------------

/** The ingestion workflow of a documentation domain: one at a time per domain (and per queue prefix, like the queues). */
export function docsIngestWorkflowId(prefix: string, domain: string): string {
  return `${prefix}docs-ingest-${domain}`;
}

export interface DocsIngestInput {
  /** The documentation domain the assistant answers for. */
  domain: string;
  /** A git URL (cloned shallowly) or an absolute folder on the worker. */
  source: string;
  /** The branch or tag to clone (git sources). */
  ref?: string;
  /** A folder inside the source that holds the docs. */
  docsPath?: string;
  /** The site the pages are published at; passage URLs are `<baseUrl>/<path>#<anchor>`. Default `https://<domain>`. */
  baseUrl?: string;
}

export interface BuildDocsIndexResult {
  index: string;
  /** The content hash the index is named after. */
  version: string;
  pages: number;
  chunks: number;
  /** The alias already served this content; nothing was rebuilt. */
  unchanged: boolean;
  /** Chunks whose vectors were computed now; the others reused an earlier index's (absent when embeddings are off). */
  embedded?: number;
}

export interface PublishDocsIndexInput {
  domain: string;
  index: string;
}

export interface PublishDocsIndexResult {
  alias: string;
  index: string;
  deletedIndexes: string[];
}

/** Failures that retrying cannot fix (the closed list the workflow gives Temporal). */
export const DOCS_INGEST_NON_RETRYABLE = ['DocsSourceNotFound', 'NoDocsFound', 'InvalidDocsSource'] as const;
export type DocsIngestErrorType = (typeof DOCS_INGEST_NON_RETRYABLE)[number];

export type DocsIngestPhase = 'building' | 'publishing' | 'done' | 'failed';

/** What the `docsIngestProgress` query answers. */
export interface DocsIngestProgress {
  phase: DocsIngestPhase;
  pages?: number;
  chunks?: number;
  index?: string;
  unchanged?: boolean;
  embedded?: number;
  deletedIndexes?: string[];
  error?: string;
}

export const DOCS_INGEST_PROGRESS_QUERY = 'docsIngestProgress';

// ---- the gap loop (docent gaps fix) --------------------------------------------------------------

/** What a gap-loop job checks after a push: which questions, against which docs. */
export interface GapCheckSpec {
  /** The live documentation domain the questions were asked on. */
  domain: string;
  /** Where the docs are inside the repository ('' or absent: its root). */
  docsPath?: string;
  /** The base URL of passage URLs, as the live docs were ingested with. */
  baseUrl: string;
  /** The questions, one per group of unanswered or down-rated questions. */
  questions: string[];
}

export interface DocsGapCheckInput {
  jobId: string;
  turn: number;
  repository: string;
  branch: string;
  /** The commit that was pushed. */
  commit: string;
  pullRequest: { url: string; number: number };
  spec: GapCheckSpec;
}

/** A question's retrieval against one docs version. */
export interface GapAnswer {
  /** Cosine of the question to its nearest passage; null without vectors. */
  relevance: number | null;
  answered: boolean;
  /** The page of the best passage, when answered. */
  topPath: string | null;
}

/** Before (live docs) and after (the job's branch) for each question; stored on the job as `gapCheck`. */
export interface GapCheckResult {
  turn: number;
  commit: string;
  /** The preview alias the branch's docs were ingested into (removed once the result is recorded). */
  previewIndex: string;
  checkedAt: string;
  questions: Array<{ question: string; before: GapAnswer; after: GapAnswer }>;
  /** Questions unanswered before and answered after. */
  fixed: number;
}

export interface BuildPreviewIndexInput {
  jobId: string;
  /** The live domain, whose passage vectors the preview reuses where the text is unchanged. */
  domain: string;
  repository: string;
  commit: string;
  docsPath?: string;
  baseUrl: string;
}

export interface ReAskInput {
  domain: string;
  /** The preview's alias domain (see previewDomain). */
  previewDomain: string;
  questions: string[];
}

/** The pseudo-domain a job's preview index is published under: its own alias, never a reader's domain. */
export const previewDomain = (jobId: string) => `preview-${jobId}.gaps.docent`;
/** A gap check's preview: never served by a public route, never a project's domain. */
export const isPreviewDomain = (domain: string) => domain.endsWith('.gaps.docent');

// ---- job reconciler ------------------------------------------------------------------------------

export interface ReconcileJobsInput {
  /** Only jobs unchanged for this long are judged, so a create or follow-up still starting is left alone. */
  olderThanMs: number;
}

export interface ReconcileJobsResult {
  /** Active jobs whose workflow was not running, now failed with a retryable error. */
  failed: string[];
}

/** How often the worker's schedule runs the reconciler, and how long a job must be unchanged to be judged. */
export const RECONCILE_EVERY_MS = 60_000;
export const RECONCILE_GRACE_MS = 120_000;

/** One reconciler schedule per deployment (task queue prefix). */
export const reconcileScheduleId = (taskQueuePrefix: string) => `${taskQueuePrefix}docent-reconcile-jobs`;
