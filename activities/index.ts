import type { Client as EsClient } from '@elastic/elasticsearch';
import type { Client as TemporalClient } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { Config } from '../src/config';
import { JobLedger } from '../src/jobs/ledger';
import type { Logger } from '../src/log';
import { createForges } from '../src/forges';
import { OutboundGuard } from '../src/net/outbound';
import type { Embedder } from '../src/search/embedder';
import { SecretBox } from '../src/crypto/secret-box';
import { WebhookStore } from '../src/webhooks/store';
import { ProjectSecretStore } from '../src/secrets/project-secrets';
import { createAgentActivities } from './agent-job/agent';
import { createPlannerActivities } from './agent-job/planner';
import { createDocsActivities } from './docs';
import { createDocsSyncActivities } from './docs-sync';
import { createGapCheckActivities } from './docs-gap-check';
import { createGitActivities } from './agent-job/git';
import { createGitHubActivities } from './agent-job/github';
import { issueOfBranch } from './agent-job/issue-answer';
import { createPullRequestAnswerActivities } from './agent-job/pull-request-answer';
import { createReconcileActivities } from './job-reconcile';
import { createJobStatusActivities } from './agent-job/job-status';
import { createSelfCheckActivities } from './self-check';
import { loadTurnSecrets } from './agent-job/setup-secrets';
import { SetupCache } from './agent-job/setup-cache';
import { createSetupCacheActivities, SetupCacheHolders } from './agent-job/setup-cache-holders';
import { createWebhookActivities } from './webhooks';
import { workspaceQueueName } from './agent-job/workspace-queue';
import { workspaceOwnerOf } from './agent-job/workspace-owner';
import { createAutomationActivities } from './automation-run';
import { createGitHubDeliveryActivities } from './github-delivery';

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
  /** Starts webhook deliveries when a turn ends; without it no webhooks are sent. */
  temporal?: TemporalClient;
}

/** The activity factory: the worker passes its clients once, and every activity closes over them. */
export function createActivities(deps: ActivityDeps) {
  const { config } = deps;
  // One per worker: each connection's installation tokens are cached in its memory.
  const { registry: forges, gate } = createForges(deps.db, config, deps.log);
  const git = {
    gitBaseUrl: config.github.gitUrl,
    forges,
    workspaceDir: config.agent.workspaceDir,
    allowPrivateNetworks: config.allowPrivateNetworks,
    workspaceQueue: workspaceQueueName(config.temporal.taskQueuePrefix, config.agent.workspaceDir),
    workspaceOwner: workspaceOwnerOf(config, deps.workerIdentity),
  };
  const guard = new OutboundGuard(config.allowPrivateNetworks);
  const box = config.secretKey && new SecretBox(config.secretKey);
  const webhooks = new WebhookStore(deps.db, box, guard);
  const projectSecrets = new ProjectSecretStore(deps.db, box);
  const notifier = deps.temporal && { webhooks, temporal: deps.temporal, taskQueuePrefix: config.temporal.taskQueuePrefix };
  const ledger = new JobLedger(deps.db, { notifier, log: deps.log });
  const journal = { ledger, prices: config.agent.prices };
  const setupHolders = new SetupCacheHolders(deps.db);
  return {
    ...createSelfCheckActivities(deps),
    ...createGitActivities(git, journal),
    ...createAgentActivities({
      ...git,
      models: config.models,
      sandbox: config.sandbox,
      repairRounds: config.agent.repairRounds,
      journal,
      secrets: (jobId) => loadTurnSecrets(ledger.jobs, projectSecrets, jobId),
      images: { images: ledger.images, guard },
      ...(config.agent.setupCache ? { setupCache: new SetupCache(config.agent.setupCache), setupHolders } : {}),
    }),
    ...createPlannerActivities({ ...git, models: config.models, journal, images: { images: ledger.images, guard } }),
    ...createSetupCacheActivities({ holders: setupHolders }),
    ...createGitHubActivities({ gitBaseUrl: config.github.gitUrl, forges, issueOfBranch: (branch) => issueOfBranch(ledger, config.agent.branchPrefix, branch) }),
    ...createPullRequestAnswerActivities({ forges, gitUrl: config.github.gitUrl }),
    ...createReconcileActivities({ ledger, temporal: deps.temporal, log: deps.log }),
    ...createJobStatusActivities({ ledger }),
    ...createWebhookActivities({ webhooks, guard }),
    ...createAutomationActivities({ config, db: deps.db, ledger, temporal: deps.temporal, log: deps.log, notifier, es: deps.es, embedder: deps.embedder, gate }),
    ...createGitHubDeliveryActivities({ config, db: deps.db, ledger, temporal: deps.temporal, log: deps.log, notifier, forges, gate }),
    ...createDocsActivities({
      es: deps.es,
      esIndexPrefix: config.elasticsearch.indexPrefix,
      esReplicas: config.elasticsearch.replicas,
      embedder: deps.embedder,
      git: { gitBaseUrl: config.github.gitUrl, forges, allowPrivateNetworks: config.allowPrivateNetworks },
    }),
    ...createDocsSyncActivities({
      es: deps.es,
      esIndexPrefix: config.elasticsearch.indexPrefix,
      esReplicas: config.elasticsearch.replicas,
      embedder: deps.embedder,
      git: { gitBaseUrl: config.github.gitUrl, forges, allowPrivateNetworks: config.allowPrivateNetworks },
      guard,
      crawlLimits: { ...config.crawl, timeoutMs: 20_000 },
    }),
    ...createGapCheckActivities({
      ledger,
      es: deps.es,
      esIndexPrefix: config.elasticsearch.indexPrefix,
      embedder: deps.embedder,
      relevanceFloor: config.assistant.relevanceFloor,
      gitBaseUrl: config.github.gitUrl,
      forges,
      allowPrivateNetworks: config.allowPrivateNetworks,
    }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
