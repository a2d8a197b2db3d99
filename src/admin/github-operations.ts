import type { GitHubSettings } from '../config';
import { AppError } from '../errors';
import { repositoryKey } from '../github/deliveries';
import type { ProjectWebhookSecrets } from '../github/webhook-secrets';
import { resolveRepository } from '../git/access';
import type { Output, Stores } from './tenancy-operations';

export type GitHubStores = Stores & { githubWebhookSecrets: ProjectWebhookSecrets };

/**
 * `project webhook-secret` (CLI and operator API): token mode's per-project secret for the repository's GitHub
 * webhook, shown once; the previous one stops verifying. With a GitHub App, GitHub signs every delivery with the App's own secret instead.
 */
export async function issueWebhookSecret(s: GitHubStores, github: GitHubSettings, projectId: string): Promise<Output> {
  if (github.app)
    throw new AppError('failed_precondition', "with a GitHub App, GitHub signs every delivery with the App's webhook secret (DOCENT_GITHUB_WEBHOOK_SECRET): projects have none of their own");
  const project = await s.tenancy.getProject(projectId);
  if (!project) throw new AppError('not_found', `project ${projectId} not found`);
  const { owner, name } = resolveRepository(project.repository, github.gitUrl);
  const repository = repositoryKey(owner, name);
  const secret = await s.githubWebhookSecrets.issue(projectId, repository);
  return {
    text: secret,
    note: `made a new GitHub webhook secret for project ${projectId}: set it as the secret of ${repository}'s webhook to <gateway>/github/webhook (content type application/json); it is shown only once, and the previous one no longer verifies`,
    json: { projectId, repository, secret },
  };
}
