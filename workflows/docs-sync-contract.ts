// The docs sync workflow's contract: a followed docs repository, its schedule and what one sync reports.

/** The schedule that follows a domain's docs; the workflows it starts are named after it (plus Temporal's timestamp). */
export function docsSyncScheduleId(prefix: string, domain: string): string {
  return `${prefix}docs-sync-${domain}`;
}

/** Every docs sync schedule of a deployment starts with this, so `syncOnPush` lists only its own. */
export const docsSyncSchedulePrefix = (prefix: string) => `${prefix}docs-sync-`;

/** How often a followed repository is synced unless `--every` says otherwise. */
export const DOCS_SYNC_DEFAULT_EVERY = '10m';

/** A docs repository followed by its branch or tag. */
export interface GitDocsSource {
  domain: string;
  /** `owner/name` on the configured git host, or an http(s) git URL. */
  repository: string;
  /** The forge connection the repository resolved through (src/forges/); absent in older histories: the deployment's. */
  forgeId?: string;
  /** The branch or tag followed. */
  ref: string;
  /** The folder inside the repository that holds the docs; empty for the whole repository. */
  docsPath: string;
  /** The site the pages are published at. Default `https://<domain>`. */
  baseUrl?: string;
}

/** A published site followed through its sitemap; passages link to the pages crawled. */
export interface SiteDocsSource {
  domain: string;
  /** The sitemap (or sitemap index) URL; only pages of its origin are crawled. */
  sitemap: string;
}

export type DocsSyncInput = GitDocsSource | SiteDocsSource;

export const isSiteSource = (input: DocsSyncInput): input is SiteDocsSource => 'sitemap' in input && typeof input.sitemap === 'string';

/** What one sync did; also the workflow's result, so the Temporal UI shows it on the schedule's workflow. */
export interface DocsSyncResult {
  domain: string;
  /** The commit the served index now holds; for a site, a hash of its pages' versions. */
  commit: string;
  index: string;
  pages: number;
  passages: number;
  /** Pages whose git blob changed (or that are new): the only ones parsed and embedded again. */
  pagesReembedded: number;
  /** Pages deleted from the repository and removed from the index. */
  pagesRemoved: number;
  /** Passages whose vectors were computed now (absent when embeddings are off). */
  passagesEmbedded?: number;
  /** Nothing changed since the served index: no index was built. */
  unchanged: boolean;
  /** Every page was parsed again: no earlier sync's index, or the chunker, model, layout or base URL changed. */
  fullRebuild: boolean;
  /** Pages that could not be read this time (a site's page that failed or is too large); an earlier copy stays served. */
  errors?: string[];
  /** Site pages robots.txt excludes. */
  pagesExcluded?: number;
}

export interface SyncDocsPublishInput {
  domain: string;
  index: string;
}

/** Failures that retrying cannot fix. */
export const DOCS_SYNC_NON_RETRYABLE = ['DocsSourceNotFound', 'NoDocsFound', 'InvalidDocsSource', 'RepositoryUrlRefused'] as const;

export type DocsSyncPhase = 'syncing' | 'publishing' | 'done' | 'failed';

export interface DocsSyncProgress {
  phase: DocsSyncPhase;
  result?: DocsSyncResult;
  error?: string;
}

export const DOCS_SYNC_PROGRESS_QUERY = 'docsSyncProgress';
