import type { ApiKeyStore } from '../auth/api-keys';
import { AppError } from '../errors';
import type { JobDoc } from './job';
import type { JobStore } from './job-store';

const idShape = /^[A-Za-z0-9_-]{1,64}$/;

/** Agent job operations, shared by the REST routes and the Connect handlers. */
export class AgentJobService {
  constructor(
    private readonly keys: ApiKeyStore,
    private readonly jobs: JobStore,
  ) {}

  async getJob(authorization: string | null | undefined, input: { projectId: string; jobId: string }): Promise<JobDoc> {
    const caller = await this.keys.authenticate(authorization, 'admin');
    // Another project's key learns nothing about this project or its jobs.
    if (caller.projectId !== input.projectId || !idShape.test(input.projectId)) throw new AppError('not_found', 'project not found');
    const job = idShape.test(input.jobId) ? await this.jobs.get(input.projectId, input.jobId) : null;
    if (!job) throw new AppError('not_found', 'job not found');
    return job;
  }
}
