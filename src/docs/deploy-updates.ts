import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import { AppError } from '../errors';
import { type DocsSyncSchedules, queueDocsSync, queuedSyncState } from './sync-schedule';

// Mintlify's docs deploy updates over docent's docs sync: an update is a sync of the project's followed docs, queued
// at once; its status id finds the sync it queued (src/docs/sync-schedule.ts) and says how far it is.

interface DeployUpdateDoc {
  _id: string;
  projectId: string;
  domain: string;
  /** The second the sync was triggered: the schedule's run named for it (or later) is this update's. */
  triggeredAt: string;
  /** The run, once found: kept so the status survives Temporal's short list of a schedule's recent runs. */
  run?: { workflowId: string; runId: string };
  createdAt: Date;
}

export class DeployUpdates {
  constructor(
    private readonly db: Db,
    private readonly schedules: DocsSyncSchedules,
  ) {}

  private get updates() {
    return this.db.collection<DeployUpdateDoc>('docs_deploy_updates');
  }

  /** Queues a sync of the project's followed docs; the id is what GET …/update-status/{statusId} takes. */
  async queue(projectId: string, domain: string | undefined): Promise<string> {
    if (!domain) throw new AppError('failed_precondition', `project ${projectId} has no documentation domain`);
    const { triggeredAt } = await queueDocsSync(this.schedules, domain).catch((err: unknown) => {
      // Not followed: there is nothing to deploy from until `docent docs follow` names the docs' repository.
      if (err instanceof AppError && err.code === 'not_found') throw new AppError('failed_precondition', `${err.message}: an update syncs the followed docs`);
      throw err;
    });
    const id = `upd_${randomBytes(12).toString('hex')}`;
    await this.updates.insertOne({ _id: id, projectId, domain, triggeredAt, createdAt: new Date() });
    return id;
  }

  /** Mintlify's update status; an id of another project is 404, as an unknown one. */
  async status(projectId: string, id: string) {
    const doc = await this.updates.findOne({ _id: id, projectId });
    if (!doc) throw new AppError('not_found', `no update ${id.slice(0, 100)}`);
    const state = await queuedSyncState(this.schedules, doc.domain, doc);
    if (state.run && !doc.run) await this.updates.updateOne({ _id: id }, { $set: { run: state.run } });
    const base = { _id: doc._id, projectId: doc.projectId, createdAt: doc.createdAt.toISOString(), subdomain: doc.domain };
    switch (state.status) {
      case 'queued':
        return { ...base, status: state.status, summary: 'queued behind the sync that is running', logs: [] };
      case 'in_progress':
        return { ...base, status: state.status, summary: `syncing since ${state.startedAt.toISOString()}`, logs: [] };
      case 'success': {
        const r = state.result;
        const summary = `indexed ${r.pages} pages (${r.passages} passages) at ${r.commit.slice(0, 12)}: ${r.pagesReembedded} changed, ${r.pagesRemoved} removed`;
        return { ...base, status: state.status, endedAt: state.endedAt.toISOString(), summary, logs: [summary] };
      }
      case 'failure':
        return { ...base, status: state.status, endedAt: state.endedAt.toISOString(), summary: `the sync failed: ${state.error}`, logs: [state.error] };
    }
  }
}
