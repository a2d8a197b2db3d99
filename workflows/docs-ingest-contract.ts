// The documentation ingestion workflow's contract: its input, progress query, errors and activity results.

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
