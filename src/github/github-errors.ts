// What GitHub's refusals mean to docent: the App refused or not installed, and the HTTP status of a failed call.

/** GitHub will not let the App reach a repository; the message says what the operator must do. */
export class GitHubAppRefused extends Error {
  override name = 'GitHubAppRefused';
}

/** The App is not installed on the repository (or cannot see it); `installUrl` is where an owner installs it. */
export class GitHubAppNotInstalled extends GitHubAppRefused {
  override name = 'GitHubAppNotInstalled';
  constructor(
    readonly repository: string,
    readonly installUrl: string,
  ) {
    super(`the GitHub App is not installed on ${repository}: install it at ${installUrl} and grant it this repository`);
  }
}

/** The HTTP status of a failed Octokit call, if it has one. */
export function statusOf(err: unknown): number | undefined {
  return typeof err === 'object' && err !== null && typeof (err as { status?: unknown }).status === 'number' ? (err as { status: number }).status : undefined;
}
