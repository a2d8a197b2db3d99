import path from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';

// Job ids as the gateway makes them (job_<hex>), and any plain name: never a separator, never a dot segment.
const plainJobId = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/**
 * The folder `<jobId><suffix>` directly inside the workspace folder. Workflow input is not trusted (anyone who can
 * reach Temporal can start a workflow by hand), so a job id that would name anything else fails the activity for good.
 */
export function jobFolder(workspaceDir: string, jobId: unknown, suffix = ''): string {
  const root = path.resolve(workspaceDir);
  const dir = typeof jobId === 'string' && plainJobId.test(jobId) ? path.resolve(root, jobId + suffix) : undefined;
  if (!dir || path.dirname(dir) !== root) {
    throw ApplicationFailure.create({ type: 'InvalidJobId', message: 'the job id is not a plain name; refusing to touch the workspace folder', nonRetryable: true });
  }
  return dir;
}
