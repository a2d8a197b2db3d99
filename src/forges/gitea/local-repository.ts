// A repository on a Gitea the operator runs (the local stack's: `docent local-forge`), made with its admin's token:
// its organization, the repository, and its first files in one commit. What exists is kept as it is, so every start
// may ask again.
import { ForgeRequestError } from '../forge-http';
import { GiteaApi } from './gitea-forge';

export interface GiteaRepositoryPlan {
  /** The server's one address (`http://127.0.0.1:3300`); its API is `{baseUrl}/api/v1`. */
  baseUrl: string;
  token: string;
  owner: string;
  name: string;
  description: string;
  /** Path → text: the first commit of a repository that has none yet. */
  files: Record<string, string>;
}

export interface GiteaRepositoryState {
  /** The repository's page. */
  url: string;
  /** What this call did: each is false when it was there already. */
  createdOwner: boolean;
  createdRepository: boolean;
  seeded: boolean;
}

const seg = encodeURIComponent;

async function exists(api: GiteaApi, path: string): Promise<unknown | null> {
  try {
    return await api.call('GET', path);
  } catch (err) {
    if (err instanceof ForgeRequestError && err.status === 404) return null;
    throw err;
  }
}

/** Makes the organization, the public repository and its first commit where missing; a repository with commits is left alone. */
export async function ensureGiteaRepository(plan: GiteaRepositoryPlan): Promise<GiteaRepositoryState> {
  const api = new GiteaApi(`${plan.baseUrl.replace(/\/+$/, '')}/api/v1`, plan.token);
  const at = `/repos/${seg(plan.owner)}/${seg(plan.name)}`;
  const createdOwner = (await exists(api, `/orgs/${seg(plan.owner)}`)) === null;
  if (createdOwner) await api.call('POST', '/orgs', { username: plan.owner, visibility: 'public' });
  let repo = (await exists(api, at)) as { html_url: string; empty: boolean } | null;
  const createdRepository = repo === null;
  if (!repo) {
    repo = await api.call<{ html_url: string; empty: boolean }>('POST', `/orgs/${seg(plan.owner)}/repos`, {
      name: plan.name,
      description: plan.description,
      private: false,
      auto_init: false,
      default_branch: 'main',
    });
  }
  const seeded = repo.empty;
  if (seeded) {
    await api.call('POST', `${at}/contents`, {
      branch: 'main',
      message: `${plan.description}\n\nThe sample project docent's local forge starts with.`,
      files: Object.entries(plan.files).map(([path, text]) => ({ operation: 'create', path, content: Buffer.from(text).toString('base64') })),
    });
  }
  return { url: repo.html_url, createdOwner, createdRepository, seeded };
}
