import { Client as EsClient } from '@elastic/elasticsearch';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { AgentJobService } from './agent/service';
import { JobStore } from './agent/job-store';
import { AssistantService } from './assistant/service';
import { ApiKeyStore } from './auth/api-keys';
import type { Config } from './config';
import type { Logger } from './log';
import { createMongo, type Mongo } from './store/mongo';
import { TenancyStore } from './tenancy/store';

/** Every client the gateway uses, built once from the config; tests build the same from a test config. */
export interface Deps {
  config: Config;
  log: Logger;
  mongo: Mongo;
  es: EsClient;
  temporalConnection: Connection;
  temporal: TemporalClient;
  keys: ApiKeyStore;
  tenancy: TenancyStore;
  agentJobs: AgentJobService;
  assistant: AssistantService;
}

export function createDeps(config: Config, log: Logger): Deps {
  const mongo = createMongo(config.mongo.url, config.mongo.db, config.dependencyTimeoutMs);
  // Temporal owns retries of the work; the gateway's own clients fail fast and report.
  const es = new EsClient({ node: config.elasticsearch.url, maxRetries: 1, requestTimeout: 30_000 });
  const temporalConnection = Connection.lazy({ address: config.temporal.address });
  const temporal = new TemporalClient({ connection: temporalConnection, namespace: config.temporal.namespace });
  const keys = new ApiKeyStore(mongo.db);
  const agentJobs = new AgentJobService(keys, new JobStore(mongo.db));
  const tenancy = new TenancyStore(mongo.db);
  // countAssistantRequest: the assistant rate limiter plugs in here (see AssistantRequestCounter).
  const assistant = new AssistantService({ config, log, db: mongo.db, es, keys });
  return { config, log, mongo, es, temporalConnection, temporal, keys, tenancy, agentJobs, assistant };
}

export async function closeDeps(deps: Deps): Promise<void> {
  await Promise.allSettled([deps.mongo.client.close(), deps.es.close(), deps.temporalConnection.close()]);
}
