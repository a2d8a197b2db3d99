import { statusOf } from './github-errors';
import type { RepositoryClient } from './client';

/** A user's permission on a repository as GitHub reports it now. */
export interface RepositoryPermission {
  /** GitHub's base level: admin, write (maintain included), read (triage included) or none. */
  permission: string;
  /** The role itself: admin, maintain, write, triage, read, or a custom role's name. */
  role: string;
}

/** Base levels that may push: `maintain` and write-based custom roles report `write`. */
const writers: ReadonlySet<string> = new Set(['admin', 'write']);
export const canPush = (p: RepositoryPermission) => writers.has(p.permission);

/** A permission change on GitHub counts here within a minute. */
const ttlMs = 60_000;
const maxEntries = 1000;

/**
 * Who may push to a repository, asked of GitHub (GET /repos/{owner}/{repo}/collaborators/{username}/permission) and
 * kept a minute per repository and user. A comment's `author_association` is not asked: an organisation member on a
 * public repository, or a read or triage collaborator, is MEMBER or COLLABORATOR without write access.
 */
export class CollaboratorPermissions {
  private readonly cache = new Map<string, { at: number; value: RepositoryPermission }>();

  async of(client: RepositoryClient, login: string, now = Date.now()): Promise<RepositoryPermission> {
    const key = `${client.owner}/${client.repo}#${login}`.toLowerCase();
    const hit = this.cache.get(key);
    if (hit && now - hit.at < ttlMs) return hit.value;
    const value = await this.ask(client, login);
    this.cache.delete(key);
    // Oldest first: a full cache drops the entry asked longest ago.
    if (this.cache.size >= maxEntries) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, { at: now, value });
    return value;
  }

  private async ask(client: RepositoryClient, login: string): Promise<RepositoryPermission> {
    try {
      const { data } = await client.octokit.rest.repos.getCollaboratorPermissionLevel({ owner: client.owner, repo: client.repo, username: login });
      return { permission: data.permission, role: data.role_name ?? data.permission };
    } catch (err) {
      // GitHub's 404: no such user (a non-collaborator gets 200 with read or none).
      if (statusOf(err) === 404) return { permission: 'none', role: 'none' };
      throw err;
    }
  }
}
