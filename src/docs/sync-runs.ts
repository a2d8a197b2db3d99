import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import { AppError } from '../errors';
import { asCrawlProgress, asIndexingProgress, type CrawlProgress, type IndexingProgress, runningHeartbeat } from './ingest-progress';
import { type DocsSyncSchedules, queueDocsSync, queuedSyncState } from './sync-schedule';
import type { DocsSyncResult } from '../../workflows/docs-sync-contract';

// A sync (or crawl) started through the operator API answers at once with an id; the caller follows it by that id,
// so no request is held for a crawl's length (a long one outlasts any client's request timeout).

interface SyncRunDoc {
  _id: string;
  domain: string;
  /** The second the sync was triggered: the schedule's run named for it (or later) is this one (src/docs/sync-schedule.ts). */
  triggeredAt: string;
  /** The run, once found: kept so the state survives Temporal's short list of a schedule's recent runs. */
  run?: { workflowId: string; runId: string };
  createdAt: Date;
}

export interface DocsSyncRun {
  id: string;
  domain: string;
  status: 'queued' | 'in_progress' | 'success' | 'failure';
  createdAt: Date;
  startedAt?: Date;
  endedAt?: Date;
  durationMs?: number;
  /** How far its indexing is (pages, passages embedded and indexed), while it indexes. */
  progress?: IndexingProgress;
  /** How far a site's crawl is (pages fetched, errors), while it crawls. */
  crawl?: CrawlProgress;
  result?: DocsSyncResult;
  error?: string;
}

/** `sync_` and 24 hex digits: what start() gives; anything else is refused before the database is asked. */
export const syncRunIdShape = /^sync_[0-9a-f]{24}$/;

export class DocsSyncRuns {
  constructor(
    private readonly db: Db,
    private readonly schedules: DocsSyncSchedules,
  ) {}

  private get runs() {
    return this.db.collection<SyncRunDoc>('docs_sync_runs');
  }

  /** Queues a sync of the followed docs (behind a running one) and answers its id; not followed: not_found. */
  async start(domain: string): Promise<DocsSyncRun> {
    const { triggeredAt } = await queueDocsSync(this.schedules, domain);
    const doc: SyncRunDoc = { _id: `sync_${randomBytes(12).toString('hex')}`, domain, triggeredAt, createdAt: new Date() };
    await this.runs.insertOne(doc);
    return { id: doc._id, domain, status: 'queued', createdAt: doc.createdAt };
  }

  /** Where the sync is now; an id of another domain is not_found, as an unknown one. */
  async state(domain: string, id: string): Promise<DocsSyncRun> {
    if (!syncRunIdShape.test(id)) throw new AppError('invalid_argument', 'a sync id is sync_ and 24 hex digits, as the start of the sync answered');
    const doc = await this.runs.findOne({ _id: id, domain });
    if (!doc) throw new AppError('not_found', `no sync ${id} of ${domain}`);
    const state = await queuedSyncState(this.schedules, domain, doc);
    if (state.run && !doc.run) await this.runs.updateOne({ _id: id }, { $set: { run: state.run } });
    const base = { id, domain, createdAt: doc.createdAt };
    switch (state.status) {
      case 'queued':
        return { ...base, status: 'queued' };
      case 'in_progress': {
        const details = await runningHeartbeat(this.schedules.temporal, state.run!.workflowId, state.run!.runId).catch(() => undefined);
        const progress = asIndexingProgress(details);
        const crawl = asCrawlProgress(details);
        return { ...base, status: 'in_progress', startedAt: state.startedAt, ...(progress && { progress }), ...(crawl && { crawl }) };
      }
      case 'success':
        return { ...base, status: 'success', startedAt: state.startedAt, endedAt: state.endedAt, durationMs: state.endedAt.getTime() - state.startedAt.getTime(), result: state.result };
      case 'failure':
        return { ...base, status: 'failure', startedAt: state.startedAt, endedAt: state.endedAt, durationMs: state.endedAt.getTime() - state.startedAt.getTime(), error: state.error };
    }
  }
}
