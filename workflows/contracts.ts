// Names and types shared by workflows, activities, the worker and the gateway. Types and constants only.

/** Task queue of agent job workflows and their activities. */
export const AGENT_TASK_QUEUE = 'docent-agent';
/** Task queue of documentation ingestion workflows and their activities. */
export const DOCS_TASK_QUEUE = 'docent-docs';
/** Every queue a docent worker serves. */
export const TASK_QUEUES = [AGENT_TASK_QUEUE, DOCS_TASK_QUEUE] as const;

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
  deletedIndexes?: string[];
  error?: string;
}

export const DOCS_INGEST_PROGRESS_QUERY = 'docsIngestProgress';
