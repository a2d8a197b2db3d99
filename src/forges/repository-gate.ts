// The one place that decides whether a tenant may name a repository: every door (CLI, REST, Connect, console,
// automations, the docs sync, context repositories) asks here, and stores the connection it answers with.
import { AppError } from '../errors';
import { resolveRepository } from '../git/access';
import { GitHubAppNotInstalled, GitHubAppRefused, statusOf } from '../github/github-errors';
import { OutboundGuard, OutboundRefused } from '../net/outbound';
import { checkRepositoryShape } from '../tenancy/store';
import { anonymousForgeId, deploymentForgeId, type ForgeConnection } from './forge-connection';
import type { ForgeRegistry } from './forge-registry';

export interface GatedRepository {
  /** The connection whose credential reaches it; `anonymous` for a URL on a host no connection serves. */
  forgeId: string;
  owner: string;
  name: string;
  cloneUrl: string;
}

/** What the repository is named for: a project's own needs push; context repositories, docs sources and triggers only read. */
export type RepositoryUse = 'write' | 'read';

const originOf = (url: string) => new URL(url).origin;

export class RepositoryGate {
  private readonly guard: OutboundGuard;

  constructor(
    readonly forges: ForgeRegistry,
    /** DOCENT_ALLOW_PRIVATE_NETWORKS: a URL on another host must not lead into private networks unless listed. */
    allowPrivateNetworks: string[],
  ) {
    this.guard = new OutboundGuard(allowPrivateNetworks);
  }

  /**
   * The connection of the organization that reaches `repository` (owner/name, or a git URL): for a name, its own
   * connections oldest first, then the deployment's if shared; for a URL, those whose git host it is on. Asks the
   * forge with each one's credential. Refuses with permission_denied, naming the repository and the organization and
   * nothing else, when none may: whether it exists elsewhere is not this tenant's to learn.
   */
  async resolve(orgId: string, repository: string, use: RepositoryUse): Promise<GatedRepository> {
    checkRepositoryShape(repository);
    const connections = await this.forges.ofOrg(orgId);
    const isUrl = /^https?:\/\//i.test(repository);
    let candidates: ForgeConnection[] = connections;
    if (isUrl) {
      const origin = originOf(resolveRepository(repository, 'https://unused.invalid').cloneUrl);
      candidates = connections.filter((c) => originOf(c.gitUrl) === origin);
      // A host neither the organization's connections nor the deployment's serve: nothing of anyone's is lent, so git reaches it without a credential.
      if (candidates.length === 0 && !this.servedByDeployment(origin)) return this.anonymous(repository);
    }
    let readOnly: ForgeConnection | undefined;
    let installUrl: string | undefined;
    for (const c of candidates) {
      const { owner, name, cloneUrl } = resolveRepository(repository, c.gitUrl);
      // The deployment's connection with no credential lends nothing: the worker's git finds out whether it exists.
      if (c.id === deploymentForgeId && !c.credential) return { forgeId: c.id, owner, name, cloneUrl };
      const reach = await this.ask(c, owner, name);
      if (reach && 'installUrl' in reach) installUrl ??= reach.installUrl;
      else if (reach && (use === 'read' || reach.push)) return { forgeId: c.id, owner, name, cloneUrl };
      else if (reach) readOnly = c;
    }
    if (readOnly) {
      throw new AppError('permission_denied', `forge connection ${readOnly.id} of organization ${orgId} can read ${repository} but not push to it; a project's repository needs write access`);
    }
    // Where to install the App says nothing of the repository: the same link is given for any name.
    const install = installUrl ? `, or install the GitHub App on it at ${installUrl}` : '';
    throw new AppError(
      'permission_denied',
      `no forge connection of organization ${orgId} can read the repository ${repository}: add one that can (docent forge add --org ${orgId}, docs/forges.md)${install}`,
    );
  }

  /** The organization's connection a stored record names, or permission_denied: a removed connection no longer reaches anything. */
  async connectionOf(orgId: string, forgeId: string | undefined): Promise<ForgeConnection> {
    const c = await this.forges.ofOrgById(orgId, forgeId ?? deploymentForgeId);
    if (c) return c;
    const which = forgeId && forgeId !== deploymentForgeId ? `forge connection ${forgeId}` : "the deployment's GitHub credential (DOCENT_GITHUB_SHARED_ORGS)";
    throw new AppError('permission_denied', `organization ${orgId} may not use ${which}: name the repository again through one of its own connections (docs/forges.md)`);
  }

  private servedByDeployment(origin: string): boolean {
    return originOf(this.forges.deployment().gitUrl) === origin;
  }

  /** A URL cloned without a credential: refused now if it leads where the worker would not connect (it checks again at each clone). */
  private async anonymous(repository: string): Promise<GatedRepository> {
    const resolved = resolveRepository(repository, 'https://unused.invalid');
    await this.guard.check(new URL(resolved.cloneUrl)).catch((err: unknown) => {
      // A name this machine cannot resolve may resolve on the worker, which checks it there.
      if (err instanceof OutboundRefused && err.unresolved) return;
      throw err instanceof OutboundRefused ? new AppError('invalid_argument', `repository ${repository} is refused: ${err.message}`) : err;
    });
    return { forgeId: anonymousForgeId, ...resolved };
  }

  private async ask(c: ForgeConnection, owner: string, name: string) {
    try {
      return await this.forges.forge(c).reach(owner, name);
    } catch (err) {
      if (err instanceof AppError) throw err;
      if (err instanceof GitHubAppRefused && !(err instanceof GitHubAppNotInstalled)) throw new AppError('failed_precondition', err.message);
      throw new AppError('unavailable', `could not ask the forge at ${c.apiUrl} about ${owner}/${name} (${statusOf(err) ?? 'network error'}); try again shortly`);
    }
  }
}
