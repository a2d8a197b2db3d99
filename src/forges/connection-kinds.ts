// What adding a connection of each kind takes: its URLs from what the operator gave, and how its token is tested
// before it is stored (src/admin/forge-operations.ts). The one place outside the registry a kind is told apart.
import { AppError } from '../errors';
import { checkToken } from './connection-check';
import type { ForgeKind } from './forge-connection';
import { giteaTokenStatus } from './gitea/gitea-forge';
import { gitlabTokenStatus } from './gitlab/gitlab-forge';

/** github.com; a GitHub Enterprise server gives both of its own. */
export const githubDefaults = { apiUrl: 'https://api.github.com', gitUrl: 'https://github.com' } as const;

export interface KindRules {
  /** Whether the deployment's GitHub App may serve it (an installation instead of a token). */
  appInstallations: boolean;
  /** The URLs when the operator gave none: undefined means they must be given. */
  defaults?: { apiUrl: string; gitUrl: string };
  /** The API and git URLs from the forge's one address (`--base-url`). */
  fromBaseUrl?(baseUrl: string): { apiUrl: string; gitUrl: string };
  /** Resolves when the forge accepts the token; else AppError (400 naming the status, 503 when it does not answer), never the token. */
  checkToken(apiUrl: string, token: string): Promise<void>;
}

/** Gitea and Forgejo: the API at `{base}/api/v1`, `GET /user` must accept the token. */
async function checkGiteaToken(apiUrl: string, token: string): Promise<void> {
  const status = await giteaTokenStatus(apiUrl, token);
  if (status === 200) return;
  if (status === undefined || status >= 500) throw new AppError('unavailable', `could not ask the forge at ${apiUrl} (${status ? `HTTP ${status}` : 'no answer'}); try again shortly`);
  throw new AppError('invalid_argument', `Gitea refused the token (HTTP ${status}) at ${apiUrl}/user: give a token it accepts (scopes: repository and issue read and write)`);
}

/** gitlab.com and self-managed GitLab: the API at `{base}/api/v4`, `GET /user` must accept the token. */
async function checkGitLabToken(apiUrl: string, token: string): Promise<void> {
  const status = await gitlabTokenStatus(apiUrl, token);
  if (status === 200) return;
  if (status === undefined || status >= 500) throw new AppError('unavailable', `could not ask the forge at ${apiUrl} (${status ? `HTTP ${status}` : 'no answer'}); try again shortly`);
  throw new AppError('invalid_argument', `GitLab refused the token (HTTP ${status}) at ${apiUrl}/user: give a token it accepts (scopes: api, read_user; a project's hooks need Maintainer)`);
}

export function kindRules(kind: ForgeKind): KindRules {
  switch (kind) {
    case 'github':
      return { appInstallations: true, defaults: githubDefaults, checkToken };
    case 'gitea':
      return { appInstallations: false, fromBaseUrl: (base) => ({ apiUrl: `${base}/api/v1`, gitUrl: base }), checkToken: checkGiteaToken };
    case 'gitlab':
      return { appInstallations: false, fromBaseUrl: (base) => ({ apiUrl: `${base}/api/v4`, gitUrl: base }), checkToken: checkGitLabToken };
  }
}
