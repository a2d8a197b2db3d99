import type { Client as EsClient } from '@elastic/elasticsearch';
import type { Db } from 'mongodb';
import type { Config } from '../src/config';
import type { Logger } from '../src/log';
import type { Embedder } from '../src/search/embedder';
import { createAgentActivities } from './agent';
import { createDocsActivities } from './docs';
import { createGapCheckActivities } from './docs-gap-check';
import { createGitActivities } from './git';
import { createGitHubActivities } from './github';
import { createJobStatusActivities } from './job-status';
import { createSelfCheckActivities } from './self-check';

/** What the worker hands to activities: its config and real clients, in production and in tests alike. */
export interface ActivityDeps {
  config: Config;
  db: Db;
  es: EsClient;
  workerIdentity: string;
  /** The passage-embedding model, loaded on first use; undefined when embeddings are off. */
  embedder?: () => Promise<Embedder>;
  /** The worker's JSON logger (tests may leave it out). */
  log?: Logger;
}

/** The activity factory: the worker passes its clients once, and every activity closes over them. */
export function createActivities(deps: ActivityDeps) {
  const { config } = deps;
  const git = { gitBaseUrl: config.github.gitUrl, token: config.github.token, workspaceDir: config.agent.workspaceDir, allowPrivateNetworks: config.allowPrivateNetworks };
  return {
    ...createSelfCheckActivities(deps),
    ...createGitActivities(git),
    ...createAgentActivities({ ...git, model: config.model, sandbox: config.sandbox, repairRounds: config.agent.repairRounds }),
    ...createGitHubActivities({ apiUrl: config.github.apiUrl, gitBaseUrl: config.github.gitUrl, token: config.github.token }),
    ...createJobStatusActivities(deps.db, deps.log),
    ...createDocsActivities({ es: deps.es, esIndexPrefix: config.elasticsearch.indexPrefix, esReplicas: config.elasticsearch.replicas, embedder: deps.embedder }),
    ...createGapCheckActivities({
      db: deps.db,
      es: deps.es,
      esIndexPrefix: config.elasticsearch.indexPrefix,
      embedder: deps.embedder,
      relevanceFloor: config.assistant.relevanceFloor,
      gitBaseUrl: config.github.gitUrl,
      token: config.github.token,
      allowPrivateNetworks: config.allowPrivateNetworks,
      githubApiUrl: config.github.apiUrl,
    }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
