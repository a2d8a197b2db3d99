// What a repository named by a project (`owner/name` or a URL) is, and where git clones it from; one of the git access
// rules src/git/ holds for every clone, fetch and push.
import { AppError } from '../errors';

export interface ResolvedRepository {
  /** What git clones and pushes to; never carries credentials. */
  cloneUrl: string;
  /** GitHub owner and name, for the pull request API. */
  owner: string;
  name: string;
}

/** Turns a project's `repository` (owner/name on the configured GitHub, or a git URL) into clone URL and owner/name. */
export function resolveRepository(repository: string, gitBaseUrl: string): ResolvedRepository {
  const short = /^([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+?)(\.git)?$/.exec(repository);
  if (short) {
    const [, owner, name] = short;
    return { cloneUrl: `${gitBaseUrl.replace(/\/+$/, '')}/${owner}/${name}.git`, owner: owner!, name: name! };
  }
  let url: URL;
  try {
    url = new URL(repository);
  } catch {
    throw new AppError('invalid_argument', `repository "${repository}" is neither owner/name nor a git URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new AppError('invalid_argument', 'repository URL must use http or https');
  // Credentials belong in DOCENT_GITHUB_TOKEN, never in a stored URL.
  if (url.username || url.password) throw new AppError('invalid_argument', 'repository URL must not contain credentials');
  const parts = url.pathname
    .replace(/\.git$/, '')
    .split('/')
    .filter(Boolean);
  if (parts.length < 2) throw new AppError('invalid_argument', `repository URL "${repository}" has no owner/name path`);
  return { cloneUrl: url.toString(), owner: parts[parts.length - 2]!, name: parts[parts.length - 1]! };
}

const plainName = /^(?!\.{1,2}$)[A-Za-z0-9_.-]{1,100}$/;

/** `owner/name` of a repository whose two parts are plain names, so that they can name folders and a tool's argument. */
export function plainRepositoryName(repository: string, gitBaseUrl: string): string {
  const { owner, name } = resolveRepository(repository, gitBaseUrl);
  if (!plainName.test(owner) || !plainName.test(name)) {
    throw new AppError('invalid_argument', `repository "${repository}" must end in an owner/name path of letters, digits, ".", "_" and "-"`);
  }
  return `${owner}/${name}`;
}
