import type { Octokit } from '@octokit/rest';
import { resolveRepository } from '../git/access';
import type { GitHubCredentials } from './credentials';

/** A client for one repository's API calls, with the repository's owner and name. */
export interface RepositoryClient {
  octokit: Octokit;
  owner: string;
  repo: string;
}

/**
 * The one place pull-request conversations get their GitHub client, from src/github/credentials.ts: the operator's
 * token, or with a GitHub App the installation token of this repository alone.
 */
export async function githubClientFor(credentials: GitHubCredentials, gitUrl: string, repository: string): Promise<RepositoryClient> {
  const { owner, name } = resolveRepository(repository, gitUrl);
  const { octokit } = await credentials.access(owner, name);
  return { octokit, owner, repo: name };
}
