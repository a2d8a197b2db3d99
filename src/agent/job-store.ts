import type { Db } from 'mongodb';
import type { JobDoc } from './job';

export class JobStore {
  constructor(private readonly db: Db) {}

  private get jobs() {
    return this.db.collection<JobDoc>('jobs');
  }

  /** A job of another project is as absent as one that does not exist. */
  async get(projectId: string, jobId: string): Promise<JobDoc | null> {
    return this.jobs.findOne({ _id: jobId, projectId });
  }
}
