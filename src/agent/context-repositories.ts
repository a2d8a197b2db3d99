import { AppError } from '../errors';
import { plainRepositoryName, resolveRepository } from '../git/access';
import type { ContextRepository } from '../../workflows/agent-job-contract';

/**
 * A create's context repositories, each under the same rules as a project's repository and with a plain owner/name
 * (the agent's tools know it by that name); the job's own repository or one named twice is the caller's mistake.
 */
export function checkContextRepositories(repos: ContextRepository[] | undefined, own: string, gitBaseUrl: string): ContextRepository[] {
  const ownName = (() => {
    const { owner, name } = resolveRepository(own, gitBaseUrl);
    return `${owner}/${name}`;
  })();
  const seen = new Set<string>();
  return (repos ?? []).map((r, i) => {
    const at = `contextRepositories[${i}].repo`;
    let name: string;
    try {
      name = plainRepositoryName(r.repo, gitBaseUrl);
    } catch (err) {
      if (err instanceof AppError) throw new AppError('invalid_argument', `${at}: ${err.message}`);
      throw err;
    }
    if (name === ownName) throw new AppError('invalid_argument', `${at}: ${name} is the job's own repository`);
    if (seen.has(name)) throw new AppError('invalid_argument', `${at}: ${name} is named twice`);
    seen.add(name);
    return r.ref ? { repo: r.repo, ref: r.ref } : { repo: r.repo };
  });
}
