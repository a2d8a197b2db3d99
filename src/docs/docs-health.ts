// A domain's docs health, in one place for the operator API and the console: what the served index holds, the last
// one-off ingest (`docent docs ingest`, what `npm start` runs for docent.local) and, when the domain is followed, its
// schedule and syncs. Nothing is copied: the index and Temporal's runs are the record (docs/decisions/2026-12-02-docs-health.md).
import type { Client as EsClient } from '@elastic/elasticsearch';
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { AppError } from '../errors';
import { docsAlias } from '../search/docs-index';
import { indexCounts } from './indexed-pages';
import { type IndexingProgress, runningIndexingProgress } from './ingest-progress';
import { type DocsSyncSchedules, type DocsSyncStatus, docsSyncStatus } from './sync-schedule';
import { DOCS_INGEST_PROGRESS_QUERY, docsIngestWorkflowId, type DocsIngestInput, type DocsIngestProgress } from '../../workflows/docs-ingest-contract';

/** The newest one-off ingest of the domain, as Temporal still lists it (its namespace's retention). */
export interface LastIngest {
  workflowId: string;
  source: string;
  startedAt: Date;
  durationMs?: number;
  status: string;
  /** What it served when it ended: pages, passages, how many embedded now, or that nothing changed. */
  pages?: number;
  passages?: number;
  embedded?: number;
  unchanged?: boolean;
  error?: string;
  /** While it runs: its phase and how far its indexing is. */
  phase?: DocsIngestProgress['phase'];
  progress?: IndexingProgress;
}

export type DocsHealth = Partial<DocsSyncStatus> & {
  domain: string;
  /** Whether a schedule follows a repository or a site; the sync fields are there only then. */
  followed: boolean;
  running: boolean;
  /** What readers are served now; zero when nothing was ingested. */
  pages: number;
  passages: number;
  index?: string;
  lastIngest?: LastIngest;
};

export interface DocsHealthSources {
  schedules: DocsSyncSchedules;
  es: EsClient;
  indexPrefix: string;
}

const failureOf = (err: unknown) => (err instanceof WorkflowFailedError ? (err.cause?.message ?? err.message) : err instanceof Error ? err.message : String(err));

async function lastIngest(s: DocsSyncSchedules, domain: string): Promise<LastIngest | undefined> {
  const handle = s.temporal.workflow.getHandle(docsIngestWorkflowId(s.taskQueuePrefix, domain));
  const info = await handle.describe().catch((err: unknown) => {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  });
  if (!info) return undefined;
  const base = {
    workflowId: info.workflowId,
    startedAt: info.startTime,
    status: info.status.name,
    ...(info.closeTime && { durationMs: info.closeTime.getTime() - info.startTime.getTime() }),
  };
  const history = await handle.fetchHistory().catch(() => undefined);
  const payloads = history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads;
  // Through the codec: with payload encryption on, the input is sealed in the history.
  const input = payloads?.length ? await decodeFromPayloadsAtIndex<DocsIngestInput>(s.temporal.options.loadedDataConverter, 0, payloads).catch(() => undefined) : undefined;
  const source = input?.source ?? '';
  if (info.status.name === 'RUNNING') {
    const p = await handle.query<DocsIngestProgress>(DOCS_INGEST_PROGRESS_QUERY).catch(() => undefined);
    const progress = p?.phase === 'building' ? await runningIndexingProgress(s.temporal, info.workflowId).catch(() => undefined) : undefined;
    return { ...base, source, ...(p && { phase: p.phase }), ...(progress && { progress }) };
  }
  const done = await handle.result().then(
    (r: DocsIngestProgress) => ({ pages: r.pages, passages: r.chunks, ...(r.embedded !== undefined && { embedded: r.embedded }), ...(r.unchanged !== undefined && { unchanged: r.unchanged }) }),
    (err: unknown) => ({ error: failureOf(err) }),
  );
  return { ...base, source, ...done };
}

/** Everything known of the domain's docs; a domain with no index, no ingest and no schedule is not_found. */
export async function docsHealth(s: DocsHealthSources, domain: string): Promise<DocsHealth> {
  const [sync, counts, ingest] = await Promise.all([
    docsSyncStatus(s.schedules, domain).catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'not_found') return undefined;
      throw err;
    }),
    indexCounts(s.es, docsAlias(s.indexPrefix, domain)),
    lastIngest(s.schedules, domain),
  ]);
  if (!sync && !counts && !ingest) throw new AppError('not_found', `${domain} is not followed and nothing was ingested for it: it has no docs`);
  return {
    ...sync,
    domain,
    followed: sync !== undefined,
    running: (sync?.running ?? false) || ingest?.status === 'RUNNING',
    pages: counts?.pages ?? 0,
    passages: counts?.passages ?? 0,
    ...(counts && { index: counts.index }),
    ...(ingest && { lastIngest: ingest }),
  };
}
