import type { Deps } from '../deps';
import { deploymentForgeId } from '../forges/forge-connection';
import { resolveRepository } from '../git/access';
import type { JobDoc } from '../jobs/job';

/**
 * `source` of a job as the REST paths answer it, which are Mintlify's: `repository` is the repository's URL on its
 * forge and `ref` the branch the agent works on, as Mintlify gives them; docent's own values stay beside them as
 * `name` (owner/name) and `baseRef` (the ref the job started from). The Connect API and webhooks keep docent's.
 */
export function restJobSource(deps: Pick<Deps, 'forges' | 'config'>) {
  const hosts = new Map<string, Promise<string>>();
  const hostOf = (forgeId: string) => {
    let host = hosts.get(forgeId);
    if (!host) {
      host = deps.forges.registry.byId(forgeId).then(
        (c) => c?.gitUrl ?? deps.config.github.gitUrl,
        () => deps.config.github.gitUrl,
      );
      hosts.set(forgeId, host);
    }
    return host;
  };
  /** A job body (jobToJson's, with or without turns) with its REST source. */
  return async <J extends Pick<JobDoc, 'source' | 'branch'> & { forgeId?: string }>(json: J): Promise<Omit<J, 'source'> & { source: RestJobSource }> => {
    let repository = json.source.repository;
    try {
      repository = resolveRepository(json.source.repository, await hostOf(json.forgeId ?? deploymentForgeId)).cloneUrl.replace(/\.git$/, '');
    } catch {
      // A repository docent cannot place on a host is shown as it was named.
    }
    return { ...json, source: { repository, ref: json.branch, name: json.source.repository, baseRef: json.source.ref } };
  };
}

export interface RestJobSource {
  repository: string;
  ref: string;
  name: string;
  baseRef: string;
}
