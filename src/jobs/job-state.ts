import type { Db } from 'mongodb';
import { isDuplicateKey } from '../store/duplicate-key';
import type { JobDoc, JobStatus } from './job';
import type { TurnDoc, TurnStatus } from './job-turns';

/** One document per archived job (`_id` = job id): the insert that makes an archive final. */
export const archiveMarkerCollection = 'job_archive_markers';

interface ArchiveMarker {
  _id: string;
  at: Date;
}

const jobStatusOf: Record<TurnStatus, JobStatus> = { active: 'active', completed: 'completed', failed: 'failed', stopped: 'failed' };

/**
 * The facts that decide a job's state, kept as unique-key inserts because on FerretDB 1.24 only those are atomic
 * (conditional updates are not isolated; docs/decisions/2026-11-21-tenancy-and-limits.md): a turn record per claimed turn, and an archive
 * marker. The job document is a cache of them; every writer settles it after writing, so a racing write that the
 * database let through (a completion over an archive, an older turn over a newer one) is put back.
 */
export class JobState {
  constructor(private readonly db: Db) {}

  private get jobs() {
    return this.db.collection<JobDoc>('jobs');
  }

  private get markers() {
    return this.db.collection<ArchiveMarker>(archiveMarkerCollection);
  }

  /** Records the archive once; `first` is false when the job was archived already, `at` is always the first archive's time. */
  async markArchived(jobId: string, at: Date): Promise<{ at: Date; first: boolean }> {
    try {
      await this.markers.insertOne({ _id: jobId, at });
      return { at, first: true };
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const existing = await this.markers.findOne({ _id: jobId });
      return { at: existing?.at ?? at, first: false };
    }
  }

  async archivedAt(jobId: string): Promise<Date | null> {
    return (await this.markers.findOne({ _id: jobId }))?.at ?? null;
  }

  /**
   * Puts the job document back in line with the facts: archived if it has a marker (archive wins), else at its
   * latest claimed turn. Called after each write, so whichever of two racing writers comes second repairs the first.
   */
  async settle(jobId: string): Promise<void> {
    const archivedAt = await this.archivedAt(jobId);
    if (archivedAt) {
      await this.jobs.updateOne({ _id: jobId, status: { $ne: 'archived' } }, { $set: { status: 'archived', archivedAt, updatedAt: new Date() } });
      return;
    }
    const latest = await this.db.collection<TurnDoc>('job_turns').find({ jobId }).sort({ turn: -1 }).limit(1).next();
    const job = await this.jobs.findOne({ _id: jobId }, { projection: { turn: 1 } });
    if (latest && job && latest.turn > job.turn) {
      await this.jobs.updateOne({ _id: jobId }, { $set: { turn: latest.turn, status: jobStatusOf[latest.status], updatedAt: new Date() } });
    }
  }
}
