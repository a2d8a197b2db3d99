import type { ForgeRepository, RepositoryPermission } from '../forges/forge';

export type { RepositoryPermission } from '../forges/forge';
export const canPush = (p: RepositoryPermission) => p.push;

/** A permission change on the forge counts here within a minute. */
const ttlMs = 60_000;
const maxEntries = 1000;

/**
 * Who may push to a repository, asked of its forge (src/forges/forge.ts, `permission`) and kept a minute per
 * connection, repository and user.
 */
export class CollaboratorPermissions {
  private readonly cache = new Map<string, { at: number; value: RepositoryPermission }>();

  /** `forgeId`: the connection asked through; the same owner/name on two forges are two repositories. */
  async of(forgeId: string, client: ForgeRepository, login: string, now = Date.now()): Promise<RepositoryPermission> {
    const key = `${forgeId} ${client.owner}/${client.name}#${login}`.toLowerCase();
    const hit = this.cache.get(key);
    if (hit && now - hit.at < ttlMs) return hit.value;
    const value = await client.permission(login);
    this.cache.delete(key);
    // Oldest first: a full cache drops the entry asked longest ago.
    if (this.cache.size >= maxEntries) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, { at: now, value });
    return value;
  }
}
