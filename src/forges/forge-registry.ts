import type { GitHubSettings } from '../config';
import { AppError } from '../errors';
import { GitHubCredentials } from '../github/credentials';
import type { Logger } from '../log';
import { GitAccessRefused, type GitAccessSettings } from '../git/access';
import type { Forge } from './forge';
import { GiteaForge } from './gitea/gitea-forge';
import { GitLabForge } from './gitlab/gitlab-forge';
import { GitHubForge } from './github/github-forge';
import { anonymousForgeId, deploymentForgeId, type ForgeConnection, forgeWebhookUrl } from './forge-connection';
import { repositoryOn } from './forge-repository';
import type { ForgeStore } from './forge-store';

/** The deployment's GitHub settings: its credential, and who may use it. */
type DeploymentGitHub = Pick<GitHubSettings, 'apiUrl' | 'gitUrl' | 'token' | 'app'> & { sharedOrgs?: string[] };

/** Whether `orgId` is one the operator named in DOCENT_GITHUB_SHARED_ORGS (names, or patterns where `*` is any run of characters). */
export function sharesDeployment(patterns: string[], orgId: string): boolean {
  return patterns.some((p) => new RegExp(`^${p.replace(/[.+?^${}()|[\]\\-]/g, '\\$&').replace(/\*/g, '.*')}$`).test(orgId));
}

/**
 * The connections a repository may be reached through, and each one's GitHub credentials: the organizations' own
 * (src/forges/forge-store.ts) and the deployment's (DOCENT_GITHUB_TOKEN or the App), which serves only the
 * organizations DOCENT_GITHUB_SHARED_ORGS names, or every one when it has no credential to lend.
 */
export class ForgeRegistry {
  private readonly forgesById = new Map<string, Forge>();

  constructor(
    /** Absent: a registry of the deployment's connection alone (a single step run outside the worker). */
    private readonly store: ForgeStore | undefined,
    private readonly github: DeploymentGitHub,
    private readonly log?: Logger,
    /** DOCENT_PUBLIC_URL (else DOCENT_API_URL): where the forges send webhooks; absent, docent registers none. */
    private readonly publicUrl?: string,
  ) {}

  /**
   * Makes sure the repository a project names through a connection sends its events to that connection's webhook,
   * where the forge lets the connection's credential manage webhooks (Gitea's, GitLab's); false where it does not (GitHub: the
   * operator or the App sets it), or the connection has no secret. A forge that fails is logged: the project stands.
   */
  async registerWebhook(forgeId: string, repository: string): Promise<boolean> {
    if (!this.publicUrl || forgeId === deploymentForgeId || forgeId === anonymousForgeId) return false;
    const c = await this.store?.get(forgeId);
    if (!c?.webhookSecret) return false;
    try {
      const forge = this.forge(c);
      const { owner, name } = await repositoryOn(forge, repository);
      return await forge.registerWebhook(owner, name, { url: forgeWebhookUrl(this.publicUrl, c.id), secret: c.webhookSecret });
    } catch (err) {
      this.log?.warn({ err, forgeId, repository }, "could not register docent's webhook on the repository");
      return false;
    }
  }

  /** The deployment's own connection, as the operator configured it. */
  deployment(): ForgeConnection {
    const credential = this.github.app ? { type: 'app' as const } : this.github.token ? { type: 'token' as const, token: this.github.token } : undefined;
    return { id: deploymentForgeId, kind: 'github', apiUrl: this.github.apiUrl, gitUrl: this.github.gitUrl, ...(credential ? { credential } : {}), createdAt: new Date(0) };
  }

  /** Whether the organization may use the deployment's connection: named by the operator, or nothing to borrow. */
  sharesDeployment(orgId: string): boolean {
    return !this.github.app && !this.github.token ? true : sharesDeployment(this.github.sharedOrgs ?? [], orgId);
  }

  /** The connections of the organization in the order a name resolves: its own, oldest first, then the deployment's if shared. */
  async ofOrg(orgId: string): Promise<ForgeConnection[]> {
    const own = (await this.store?.list(orgId)) ?? [];
    return this.sharesDeployment(orgId) ? [...own, this.deployment()] : own;
  }

  /** The connection of that id, if the organization may use it. */
  async ofOrgById(orgId: string, forgeId: string): Promise<ForgeConnection | null> {
    if (forgeId === deploymentForgeId) return this.sharesDeployment(orgId) ? this.deployment() : null;
    const c = (await this.store?.get(forgeId)) ?? null;
    return c && c.orgId === orgId ? c : null;
  }

  /** Any connection by id (the webhook intake, which learns the organization from it). */
  async byId(forgeId: string): Promise<ForgeConnection | null> {
    return forgeId === deploymentForgeId ? this.deployment() : ((await this.store?.get(forgeId)) ?? null);
  }

  /**
   * How git reaches a repository of the connection a job or a sync recorded (absent: the deployment's, as before
   * connections): that connection's git host and credential only. A removed connection reaches nothing.
   */
  async gitAccess(forgeId: string | undefined, base: GitAccessSettings): Promise<GitAccessSettings> {
    // No host is this connection's: every URL is "another host", reached without a credential at checked addresses.
    if (forgeId === anonymousForgeId) return { allowPrivateNetworks: base.allowPrivateNetworks, gitBaseUrl: 'https://no-forge.invalid' };
    const c = await this.connection(forgeId);
    return { ...base, gitBaseUrl: c.gitUrl, forge: this.forge(c) };
  }

  /** The forge of the connection a job recorded, for its API calls (pull requests, checks, comments). */
  async forgeOf(forgeId: string | undefined): Promise<Forge> {
    if (forgeId === anonymousForgeId) throw new GitAccessRefused('credential', 'the repository is on a host no forge connection serves: docent can clone it, not open pull requests on it');
    return this.forge(await this.connection(forgeId));
  }

  private async connection(forgeId: string | undefined): Promise<ForgeConnection> {
    const c = await this.byId(forgeId ?? deploymentForgeId);
    if (!c) throw new GitAccessRefused('credential', `forge connection ${forgeId} was removed: its repositories can no longer be reached`);
    return c;
  }

  /** The forge of one connection, by its kind; kept per process so installation tokens are cached across steps. */
  forge(c: ForgeConnection): Forge {
    // A connection's credential never changes: a new one is a new connection, with a new id.
    let forge = this.forgesById.get(c.id);
    if (!forge) {
      forge = this.build(c);
      this.forgesById.set(c.id, forge);
    }
    return forge;
  }

  /** The one place a connection's kind picks its module. */
  private build(c: ForgeConnection): Forge {
    switch (c.kind) {
      case 'github':
        return new GitHubForge(new GitHubCredentials(settingsOf(c, this.github), this.log));
      case 'gitea':
        return new GiteaForge(c.apiUrl, c.credential?.type === 'token' ? c.credential.token : undefined);
      case 'gitlab':
        return new GitLabForge(c.apiUrl, c.credential?.type === 'token' ? c.credential.token : undefined);
    }
  }
}

/** The GitHub settings a connection's credentials are built from: an App connection borrows the deployment's App identity. */
function settingsOf(c: ForgeConnection, github: DeploymentGitHub) {
  const base = { apiUrl: c.apiUrl, gitUrl: c.gitUrl };
  if (c.id === deploymentForgeId) return { ...base, token: github.token, app: github.app };
  if (c.credential?.type === 'token') return { ...base, token: c.credential.token };
  if (c.credential?.type === 'app') {
    if (!github.app) throw new AppError('failed_precondition', `forge connection ${c.id} is an installation of the deployment's GitHub App, and DOCENT_GITHUB_APP_ID is not set`);
    return { ...base, app: github.app, installationId: c.credential.installationId };
  }
  return base;
}
