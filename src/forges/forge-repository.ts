import { resolveRepository } from '../git/access';
import type { Forge, ForgeRepository } from './forge';

/** The API of a repository (`owner/name` or a URL) on a connection's forge. */
export function repositoryOn(forge: Forge, repository: string, retryWindow?: () => number): Promise<ForgeRepository> {
  // Only the owner and the name are read: the base URL is the connection's, not this call's.
  const { owner, name } = resolveRepository(repository, 'https://forge.invalid');
  return forge.repository(owner, name, retryWindow);
}
