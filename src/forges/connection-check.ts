// Asks GitHub whether a forge connection's credential works before the connection is stored
// (src/admin/forge-operations.ts). The token is sent to the connection's API alone, and never appears in an error.
import { createAppAuth } from '@octokit/auth-app';
import { Octokit } from '@octokit/rest';
import type { GitHubSettings } from '../config';
import { AppError } from '../errors';
import { statusOf } from '../github/github-errors';

/** How long the forge has to answer the check. */
const checkTimeoutMs = 15_000;
const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

const client = (apiUrl: string, extra: Record<string, unknown>) =>
  new Octokit({ baseUrl: apiUrl, userAgent: 'docent', request: { retries: 0, signal: AbortSignal.timeout(checkTimeoutMs) }, log: quiet, ...extra });

/** A 5xx or no answer (Octokit reports a network error as 500): the forge's trouble, not the credential's. */
function unreachable(apiUrl: string, status: number | undefined): AppError {
  const what = status === undefined || status === 500 ? 'no answer, or HTTP 500' : `HTTP ${status}`;
  return new AppError('unavailable', `could not ask the forge at ${apiUrl} (${what}); try again shortly`);
}

/** `GET {apiUrl}/user` with the token must answer 200; else 400 with the status GitHub gave, never the token. */
export async function checkToken(apiUrl: string, token: string): Promise<void> {
  let status: number | undefined;
  try {
    status = (await client(apiUrl, { auth: token }).request('GET /user')).status;
  } catch (err) {
    status = statusOf(err);
  }
  if (status === 200) return;
  if (status === undefined || status >= 500) throw unreachable(apiUrl, status);
  throw new AppError('invalid_argument', `GitHub refused the token (HTTP ${status}) at ${apiUrl}/user: give a token it accepts`);
}

/**
 * `GET {apiUrl}/app/installations/{id}`, signed with the JWT of the deployment's App, must answer 200: the
 * installation is one of this App's. Else 400 naming the installation.
 */
export async function checkAppInstallation(apiUrl: string, app: NonNullable<GitHubSettings['app']>, installationId: number): Promise<void> {
  const auth = { appId: app.id, privateKey: app.privateKey.reveal() };
  let status: number | undefined;
  try {
    status = (await client(apiUrl, { authStrategy: createAppAuth, auth }).request('GET /app/installations/{installation_id}', { installation_id: installationId })).status;
  } catch (err) {
    status = statusOf(err);
  }
  if (status === 200) return;
  if (status === undefined || status >= 500) throw unreachable(apiUrl, status);
  if (status === 404)
    throw new AppError('invalid_argument', `the deployment's GitHub App has no installation ${installationId} (HTTP 404 at ${apiUrl}): install the App, then give its installation id`);
  throw new AppError(
    'failed_precondition',
    `GitHub refused the deployment's GitHub App (HTTP ${status}) when asked about installation ${installationId}: check DOCENT_GITHUB_APP_ID and its private key`,
  );
}
