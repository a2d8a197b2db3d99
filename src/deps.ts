import type { Client as EsClient } from '@elastic/elasticsearch';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { AgentJobService } from './agent/service';
import { AutomationRunner } from './automations/automation-runner';
import { AutomationService } from './automations/automation-service';
import { AutomationStore } from './automations/automation-store';
import { AssistantService } from './assistant/service';
import { settledWithin } from './assistant/turn-writes';
import { LlmsTxtService } from './docs/llms-service';
import { GapService } from './gaps/gap-service';
import { ApiKeyStore } from './auth/api-keys';
import { StreamLeases } from './auth/stream-leases';
import type { Config } from './config';
import { RateLimits } from './limits/rate-limits';
import type { Logger } from './log';
import { createMetrics, type Metrics } from './metrics';
import type { Tracer } from '@opentelemetry/api';
import { embedderLoader, type EmbedderLoader } from './search/embedder';
import { createEsClient } from './search/es-client';
import { temporalConnectionOptions, temporalDataConverter } from './temporal/connection';
import { createMongo, type Mongo } from './store/mongo';
import { TenancyStore } from './tenancy/store';
import { OutboundGuard } from './net/outbound';
import type { Notifier } from './webhooks/notify';
import { SecretBox } from './crypto/secret-box';
import type { JobAdmission } from './jobs/admission';
import { JobLedger } from './jobs/ledger';
import { WebhookStore } from './webhooks/store';
import { createForges } from './forges';

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
  /** Automations: their REST and Connect surface, runs through the same job starter as agentJobs. */
  automations: AutomationService;
  /** The only writer of job state; closed before the Temporal connection (it may still be starting webhooks). */
  /** The gateway's side of the ledger: admission (src/jobs/admission.ts), and closing its background work. */
  jobLedger: JobAdmission & Pick<JobLedger, 'close'>;
  webhooks: WebhookStore;
  /** Starts webhook deliveries (the gateway sends agent_job.archived and redeliveries). */
  notifier: Notifier;
  limits: RateLimits;
  assistant: AssistantService;
  /** llms.txt and llms-full.txt of each domain's public pages, cached per index version. */
  llms: LlmsTxtService;
  /** The gap loop: failed questions to an agent job. */
  gaps: GapService;
  /** Per-key caps and revocation checks of open streams. */
  streams: StreamLeases;
  /** The embedding model of hybrid retrieval, loaded on first use; undefined when DOCENT_EMBEDDINGS=off. */
  embedder?: EmbedderLoader;
  metrics: Metrics;
  /** Forge connections and the one gate every repository a tenant names goes through (src/forges/). */
  forges: ReturnType<typeof createForges>;
  /** Set by main when DOCENT_OTEL_EXPORTER_OTLP_ENDPOINT is; undefined means tracing is off. */
  tracer?: Tracer;
}

export function createDeps(config: Config, log: Logger): Deps {
  const mongo = createMongo(config.mongo.url, config.mongo.db, config.dependencyTimeoutMs, config.mongo);
  // Temporal owns retries of the work; the gateway's own clients fail fast and report.
  const es = createEsClient(config.elasticsearch, { maxRetries: 1, requestTimeout: 30_000 });
  const temporalConnection = Connection.lazy(temporalConnectionOptions(config.temporal));
  const temporal = new TemporalClient({ connection: temporalConnection, namespace: config.temporal.namespace, dataConverter: temporalDataConverter(config.temporal) });
  const keys = new ApiKeyStore(mongo.db, { cacheMs: config.lookupCacheMs });
  const tenancy = new TenancyStore(mongo.db, { cacheMs: config.lookupCacheMs });
  const forges = createForges(mongo.db, config, log);
  const limits = new RateLimits(mongo.db, config.limits);
  const webhooks = new WebhookStore(mongo.db, config.secretKey && new SecretBox(config.secretKey), new OutboundGuard(config.allowPrivateNetworks));
  const notifier: Notifier = { webhooks, temporal, taskQueuePrefix: config.temporal.taskQueuePrefix };
  const jobLedger = new JobLedger(mongo.db, { notifier, log });
  const agentJobs = new AgentJobService({
    config,
    log,
    tenancy,
    gate: forges.gate,
    ledger: jobLedger,
    temporal,
    quota: limits,
  });
  // One model thread: questions are tiny, and under load the model should not compete with Elasticsearch for cores.
  const embedder = embedderLoader(config.embeddingModelDir, { threads: 1, cacheDir: config.embeddingCacheDir });
  const assistant = new AssistantService({
    config,
    log,
    db: mongo.db,
    es,
    embedder,
    // Counted after authentication and validation: a refused request uses no quota.
    countAssistantRequest: (r) => limits.consumeAssistantMessage({ keyId: r.caller.keyId, orgId: r.caller.orgId, ip: r.remoteAddress ?? 'unknown' }),
    countSearchRequest: (r) => limits.consumeSearch({ keyId: r.caller.keyId, orgId: r.caller.orgId, ip: r.remoteAddress }),
  });
  const streams = new StreamLeases(keys, { perKey: config.edge.streamsPerKey, recheckMs: config.edge.streamKeyRecheckMs }, log);
  const metrics = createMetrics(mongo.db, config.dependencyTimeoutMs);
  const llms = new LlmsTxtService({ es, indexPrefix: config.elasticsearch.indexPrefix });
  const automationStore = new AutomationStore(mongo.db);
  const automations = new AutomationService({
    tenancy,
    store: automationStore,
    runner: new AutomationRunner({ store: automationStore, tenancy, starter: agentJobs.starter, log, caps: config.automations, notifier }),
    schedules: { temporal, taskQueuePrefix: config.temporal.taskQueuePrefix },
    gate: forges.gate,
    limits: config.automations,
  });
  const gaps = new GapService({ db: mongo.db, es, indexPrefix: config.elasticsearch.indexPrefix, embedder, tenancy, agentJobs });
  return {
    config,
    log,
    mongo,
    es,
    temporalConnection,
    temporal,
    keys,
    tenancy,
    agentJobs,
    automations,
    jobLedger,
    webhooks,
    notifier,
    limits,
    assistant,
    llms,
    gaps,
    streams,
    embedder,
    metrics,
    forges,
  };
}

/**
 * Waits, within the shutdown grace, for the turns of answers whose streams ended before their writes did
 * (src/assistant/turn-writes.ts): before the database client closes, or a test drops its database.
 */
export async function settleWrites(deps: Deps): Promise<void> {
  await settledWithin(deps.assistant.turnWrites.drain(), deps.config.shutdownGraceMs);
}

export async function closeDeps(deps: Deps): Promise<void> {
  await settleWrites(deps);
  await deps.limits.close().catch(() => undefined); // before the database client closes
  await deps.jobLedger.close();
  await Promise.allSettled([deps.mongo.client.close(), deps.es.close(), deps.temporalConnection.close(), deps.embedder?.close()]);
}
