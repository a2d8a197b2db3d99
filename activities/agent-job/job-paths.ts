import path from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import { PLAIN_JOB_ID } from '../../workflows/agent-job-contract';

/**
 * The folder `<jobId><suffix>` directly inside the workspace folder. Workflow input is not trusted (anyone who can
 * reach Temporal can start a workflow by hand), so a job id that would name anything else fails the activity for good.
 */
export function jobFolder(workspaceDir: string, jobId: unknown, suffix = ''): string {
  const root = path.resolve(workspaceDir);
  const dir = typeof jobId === 'string' && PLAIN_JOB_ID.test(jobId) ? path.resolve(root, jobId + suffix) : undefined;
  if (!dir || path.dirname(dir) !== root) {
    throw ApplicationFailure.create({ type: 'InvalidJobId', message: 'the job id is not a plain name; refusing to touch the workspace folder', nonRetryable: true });
  }
  return dir;
}

/** The job's read-only context repositories, `<owner>/<name>` each: beside the clone, never inside it, so nothing there is committed. */
export const contextFolder = (workspaceDir: string, jobId: string) => jobFolder(workspaceDir, jobId, '.context');
