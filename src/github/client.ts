import { Octokit } from '@octokit/rest';
import { resolveRepository } from '../jobs/repository';

/** What a GitHub API call for one repository needs: the API, where `owner/name` repositories live, and the credential. */
export interface GitHubApiSettings {
  apiUrl: string;
  gitUrl: string;
  token?: string;
}

/** A client for one repository's API calls, with the repository's owner and name. */
export interface RepositoryClient {
  octokit: Octokit;
  owner: string;
  repo: string;
}

/**
 * The one place pull-request conversations get their GitHub client: today the operator's token for every
 * repository; with a GitHub App, the installation token of this repository alone.
 */
export function githubClientFor(settings: GitHubApiSettings, repository: string): RepositoryClient {
  const { owner, name } = resolveRepository(repository, settings.gitUrl);
  // Temporal retries activities and GitHub redelivers webhooks; the client itself does not retry.
  const octokit = new Octokit({ auth: settings.token, baseUrl: settings.apiUrl, userAgent: 'docent', request: { retries: 0 } });
  return { octokit, owner, repo: name };
}
