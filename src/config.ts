import { createPrivateKey } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { catalogPrices, modelCatalogSchema, type CatalogModel } from './llm/model-catalog';
import { priceTableSchema, type PriceTable } from './jobs/prices';
import { parseNetwork } from './net/addresses';
import type { SandboxLimits } from './sandbox';
import { parseEgressAllowRule, type EgressAllowRule } from './sandbox/egress/allow-rules';

// The checkout or install folder: config.ts runs from src/ under jest and from dist/src/ when compiled.
function packageRoot(): string {
  let dir = __dirname;
  while (!existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

const originList = z
  .string()
  .transform((v) =>
    v
      .split(',')
      .map((o) => o.trim().replace(/\/$/, ''))
      .filter(Boolean),
  )
  .refine((list) => list.every((o) => URL.canParse(o) && new URL(o).origin === o.toLowerCase() && /^https?:/.test(o)), 'must be a comma-separated list of origins (scheme://host[:port])');

const port = z.coerce.number().int().min(0).max(65535);
const megabytes = z.coerce
  .number()
  .int()
  .min(1)
  .max(1024 * 1024);

const cidrList = z
  .string()
  .transform((v) =>
    v
      .split(',')
      .map((c) => c.trim())
      .filter(Boolean),
  )
  .refine((list) => list.every(isCidr), 'must be a comma-separated list of CIDRs such as 10.0.0.0/8 or fd00::/8');

function isCidr(value: string): boolean {
  const [address, bits, ...rest] = value.split('/');
  const family = isIP(address ?? '');
  const prefix = Number(bits);
  // parseNetwork: an IPv4-mapped network must keep its /96 (it stands for an IPv4 network).
  return rest.length === 0 && family !== 0 && Number.isInteger(prefix) && prefix >= 0 && prefix <= (family === 4 ? 32 : 128) && bits !== '' && parseNetwork(value) !== undefined;
}
const positiveInt = z.coerce.number().int().positive();

// `host:port` or `CIDR:port` entries, comma-separated.
const egressAllowList = z.string().transform((v, ctx) => {
  const rules: EgressAllowRule[] = [];
  for (const entry of v
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    try {
      rules.push(parseEgressAllowRule(entry));
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `${(err as Error).message} (e.g. 10.1.2.3:5432, 10.0.0.0/8:443, registry.internal:8080)` });
      return z.NEVER;
    }
  }
  return rules;
});

// A PEM given inline (secrets injected as variables) or as a file path (mounted secrets); read once, here.
const pem = z.string().transform((v, ctx) => {
  if (v.trimStart().startsWith('-----BEGIN')) return Buffer.from(v);
  try {
    return readFileSync(v);
  } catch {
    ctx.addIssue({ code: 'custom', message: `cannot read the file ${v}` });
    return z.NEVER;
  }
});

const keyId = /^[A-Za-z0-9._-]{1,64}$/;
// `id:base64key,…`: the first key encrypts, every key decrypts (rotation: put the new key first, keep the old ones).
const payloadKeys = z.string().transform((v, ctx) => {
  const keys = new Map<string, Buffer>();
  for (const entry of v
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const [id, material, ...rest] = entry.split(':');
    const key = Buffer.from(material ?? '', 'base64');
    // The key itself never appears in the message: only its id and position.
    if (rest.length || !id || !keyId.test(id) || key.length !== 32) {
      ctx.addIssue({ code: 'custom', message: `entry ${keys.size + 1} must be <id>:<32 bytes in base64>, the id 1-64 letters, digits, . _ or -` });
      return z.NEVER;
    }
    if (keys.has(id)) {
      ctx.addIssue({ code: 'custom', message: `key id ${id} appears twice` });
      return z.NEVER;
    }
    keys.set(id, key);
  }
  if (keys.size === 0) {
    ctx.addIssue({ code: 'custom', message: 'must name at least one key' });
    return z.NEVER;
  }
  return { encryptWith: keys.keys().next().value as string, keys };
});

// A JSON setting, parsed before its schema checks it.
const json = z.string().transform((v, ctx) => {
  try {
    return JSON.parse(v) as unknown;
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be JSON' });
    return z.NEVER;
  }
});

const nodeList = z
  .string()
  .transform((v) =>
    v
      .split(',')
      .map((u) => u.trim())
      .filter(Boolean),
  )
  .refine((list) => list.length > 0 && list.every((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol)), 'must be one URL or a comma-separated list of node URLs');

// Every setting docent reads, by its environment variable name; nothing else reads process.env.
const settings = z.object({
  DOCENT_HOST: z.string().default('127.0.0.1'),
  DOCENT_HTTP_PORT: port.default(8080),
  DOCENT_GRPC_PORT: port.default(8081),
  DOCENT_MONGO_URL: z
    .string()
    .regex(/^mongodb(\+srv)?:\/\//, 'must be a mongodb:// URL')
    .default('mongodb://127.0.0.1:27017'),
  DOCENT_MONGO_DB: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,63}$/, 'must be a plain database name')
    .default('docent'),
  // Concerns for replica sets (README, "Clusters"); unset leaves the server's (or the URL's) defaults.
  DOCENT_MONGO_READ_CONCERN: z.enum(['local', 'available', 'majority', 'linearizable', 'snapshot']).optional(),
  DOCENT_MONGO_WRITE_CONCERN: z
    .string()
    .regex(/^(majority|[0-9]{1,2})$/, 'must be majority or a number of members')
    .optional(),
  // One node or several (a cluster): requests go round the list and skip a node that stops answering.
  DOCENT_ES_URL: nodeList.default(['http://127.0.0.1:9200']),
  // Copies of each documentation index on other nodes; 0 suits one node, 1 or more a cluster.
  DOCENT_ES_REPLICAS: z.coerce.number().int().min(0).max(10).default(0),
  // Elasticsearch with security on: a user and password, or an API key (base64 `id:key`, as Elasticsearch returns it).
  DOCENT_ES_USERNAME: z.string().optional(),
  DOCENT_ES_PASSWORD: z.string().optional(),
  DOCENT_ES_API_KEY: z.string().optional(),
  // The CA that signed Elasticsearch's HTTPS certificate, when it is not one the system trusts (PEM or a file path).
  DOCENT_ES_CA: pem.optional(),
  DOCENT_ES_INDEX_PREFIX: z
    .string()
    .regex(/^[a-z0-9_-]{1,40}$/, 'must be lowercase letters, digits, - or _')
    .default('docent'),
  // Hybrid retrieval: BM25 plus vectors from a local sentence-embedding model; `off` leaves BM25 alone.
  DOCENT_EMBEDDINGS: z.enum(['on', 'off']).default('on'),
  // Where infra/stack.sh installs downloads (and the embedding model, unless DOCENT_EMBEDDING_MODEL_DIR says otherwise).
  DOCENT_CACHE: z.string().default(path.join(os.homedir(), '.cache', 'docent')),
  DOCENT_EMBEDDING_MODEL_DIR: z.string().optional(),
  // A folder where workers keep each passage's vector by text hash, so that ingesting the same pages into another
  // index or domain on this host embeds them once (the test suite's shared fixtures); unset keeps no such store.
  DOCENT_EMBEDDING_CACHE_DIR: z.string().optional(),
  // Workflow code bundled ahead (bundleWorkflowCode's output, as a file) for workers to load instead of bundling at start.
  DOCENT_WORKFLOW_BUNDLE: z.string().optional(),
  DOCENT_TEMPORAL_ADDRESS: z.string().default('127.0.0.1:7233'),
  DOCENT_TEMPORAL_NAMESPACE: z.string().default('default'),
  DOCENT_TEMPORAL_UI_URL: z.url().default('http://127.0.0.1:8233'),
  // How long a create or follow-up waits for Temporal to take its instruction (the client's own retries included) before 503.
  DOCENT_TEMPORAL_START_TIMEOUT_MS: positiveInt.default(5_000),
  // TLS to Temporal (README, "Temporal Cloud, mTLS and encryption"): a client pair for mTLS, a CA for a private one.
  DOCENT_TEMPORAL_TLS: z.enum(['on', 'off']).optional(),
  DOCENT_TEMPORAL_TLS_CERT: pem.optional(),
  DOCENT_TEMPORAL_TLS_KEY: pem.optional(),
  DOCENT_TEMPORAL_TLS_CA: pem.optional(),
  DOCENT_TEMPORAL_TLS_SERVER_NAME: z.string().optional(),
  DOCENT_TEMPORAL_API_KEY: z.string().optional(),
  // AES-256-GCM keys for workflow and activity payloads; unset leaves payloads in clear.
  DOCENT_PAYLOAD_KEYS: payloadKeys.optional(),
  // Only while histories written before DOCENT_PAYLOAD_KEYS drain: lets the codec read payloads that were never encrypted.
  DOCENT_PAYLOAD_ALLOW_PLAINTEXT: z.enum(['0', '1']).default('0'),
  // Bearer token operators (the Temporal UI) send to the gateway's codec endpoint; unset leaves the endpoint off.
  DOCENT_CODEC_TOKEN: z.string().min(24, 'must be at least 24 characters').optional(),
  DOCENT_TASK_QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{0,60}$/, 'must be letters, digits, ., - or _')
    .default(''),
  DOCENT_MODEL_PROVIDER: z.enum(['openai', 'anthropic', 'openai-compatible']).optional(),
  DOCENT_MODEL: z.string().optional(),
  DOCENT_MODEL_BASE_URL: z.url().optional(),
  DOCENT_MODEL_API_KEY: z.string().optional(),
  // The single model of DOCENT_MODEL takes image parts (instructions with screenshots); DOCENT_MODELS says it per model.
  DOCENT_MODEL_IMAGES: z.enum(['on', 'off']).default('off'),
  // The models jobs may choose, the first the default (README "Models"); unset: DOCENT_MODEL alone.
  DOCENT_MODELS: json.pipe(modelCatalogSchema).optional(),
  DOCENT_GITHUB_API_URL: z.url().default('https://api.github.com'),
  DOCENT_GITHUB_TOKEN: z.string().optional(),
  DOCENT_GITHUB_GIT_URL: z.url().default('https://github.com'),
  // A GitHub App (README "GitHub App"): with it, each job gets an installation token for its one repository.
  DOCENT_GITHUB_APP_ID: z
    .string()
    .regex(/^\d{1,20}$/, 'must be the App ID, a number')
    .optional(),
  DOCENT_GITHUB_APP_PRIVATE_KEY: z.string().optional(),
  DOCENT_GITHUB_APP_PRIVATE_KEY_FILE: z.string().optional(),
  DOCENT_BRANCH_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9._/-]{1,40}$/, 'must be a plain branch name prefix')
    .default('docent/'),
  DOCENT_WORKSPACE_DIR: z.string().default(path.join(os.tmpdir(), 'docent-workspaces')),
  // What a project's setup left behind, kept per worker so a later job with the same key skips setup (README "Cached setup").
  DOCENT_SETUP_CACHE: z.enum(['on', 'off']).default('on'),
  DOCENT_SETUP_CACHE_DIR: z.string().optional(),
  DOCENT_SETUP_CACHE_MAX_BYTES: positiveInt.default(10 * 1024 * 1024 * 1024),
  DOCENT_AGENT_MAX_STEPS: positiveInt.max(200).default(25),
  DOCENT_AGENT_HEARTBEAT_TIMEOUT_MS: positiveInt.min(1000).default(60_000),
  // How long a turn's step waits for the worker holding the clone (a restart) before the turn starts over elsewhere.
  DOCENT_AGENT_CLONE_WAIT_MS: positiveInt.min(1000).default(60_000),
  DOCENT_RECONCILER: z.enum(['on', 'off']).default('on'),
  // USD per million tokens by model id, e.g. {"gpt-4o":{"input":2.5,"output":10}}: turns show costUsd for these models.
  DOCENT_MODEL_PRICES: json.pipe(priceTableSchema).default({}),
  // 32 bytes, base64: encrypts webhook secrets at rest (`openssl rand -base64 32`); webhooks need it.
  DOCENT_SECRET_KEY: z
    .string()
    .refine((v) => Buffer.from(v, 'base64').length === 32, 'must be 32 bytes in base64 (openssl rand -base64 32)')
    .optional(),
  // Verifies POST /github/webhook (X-Hub-Signature-256); unset leaves the route off.
  DOCENT_GITHUB_WEBHOOK_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  // The handle a pull-request comment mentions to steer its job (`@docent`).
  DOCENT_GITHUB_MENTION: z
    .string()
    .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/, 'must be a GitHub login or app slug, without the @')
    .default('docent'),
  // Rounds the agent gets to fix the project's checks after they fail (docs/decisions.md, "Sandbox").
  DOCENT_AGENT_REPAIR_ROUNDS: z.coerce.number().int().min(0).max(10).default(2),
  // bubblewrap sandbox for repository code: `off` runs no repository code at all (no run_command, no checks).
  DOCENT_SANDBOX: z.enum(['bwrap', 'off']).default('bwrap'),
  DOCENT_SANDBOX_BWRAP: z.string().default('bwrap'),
  DOCENT_SANDBOX_TIMEOUT_MS: positiveInt.min(100).default(600_000),
  DOCENT_SANDBOX_MEMORY_MB: megabytes.default(4096),
  DOCENT_SANDBOX_MAX_PROCESSES: positiveInt.max(65_536).default(512),
  DOCENT_SANDBOX_MAX_FILE_MB: megabytes.default(1024),
  DOCENT_SANDBOX_MAX_DISK_MB: megabytes.default(4096),
  DOCENT_SANDBOX_TMP_MB: megabytes.default(512),
  DOCENT_SANDBOX_SHM_MB: megabytes.default(64),
  DOCENT_SANDBOX_MAX_INODES: positiveInt.default(200_000),
  // CPU cores' worth of time per second for one command (cgroup cpu.max); unset: no CPU cap.
  DOCENT_SANDBOX_CPUS: z.coerce.number().positive().max(1024).optional(),
  // cgroup v2 for memory/CPU/pids per command: auto (this worker's own cgroup, when delegated), off, or a delegated cgroup directory.
  DOCENT_SANDBOX_CGROUP: z
    .string()
    .refine((v) => v === 'auto' || v === 'off' || path.isAbsolute(v), 'must be auto, off or an absolute cgroup v2 directory')
    .default('auto'),
  // Private endpoints (host:port or CIDR:port) sandboxed commands may reach through the egress proxy.
  DOCENT_SANDBOX_EGRESS_ALLOW: egressAllowList.default([]),
  // The unprivileged uid:gid sandboxed commands run as when the worker runs as root.
  DOCENT_SANDBOX_USER: z
    .string()
    .regex(/^[1-9][0-9]{0,9}:[1-9][0-9]{0,9}$/, 'must be uid:gid, both non-zero, e.g. 61000:61000')
    .default('61000:61000'),
  // Host folders bound read-only into the sandbox besides /usr (toolchains such as /opt/node).
  DOCENT_SANDBOX_READ_ONLY_PATHS: z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean),
    )
    .refine((list) => list.every((p) => path.isAbsolute(p)), 'must be a comma-separated list of absolute paths')
    .default([]),
  // Networks that repository URLs (and other outbound URLs admins give) may reach although private or loopback.
  DOCENT_ALLOW_PRIVATE_NETWORKS: cidrList.default([]),
  // Bounds of one crawl of a published docs site (docs ingest --sitemap): parallel fetches, pages, bytes per page.
  DOCENT_CRAWL_CONCURRENCY: z.coerce.number().int().min(1).max(32).default(4),
  DOCENT_CRAWL_MAX_PAGES: z.coerce.number().int().min(1).max(100_000).default(2_000),
  DOCENT_CRAWL_MAX_PAGE_BYTES: z.coerce.number().int().min(10_000).max(100_000_000).default(5_000_000),
  DOCENT_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  DOCENT_SHUTDOWN_GRACE_MS: positiveInt.default(10_000),
  DOCENT_DEPENDENCY_TIMEOUT_MS: positiveInt.default(2_000),
  // A client must send its whole request (headers and body) within this time, or gets 408.
  DOCENT_REQUEST_TIMEOUT_MS: positiveInt.default(30_000),
  // An h2c connection with no request in flight for this long is closed (GOAWAY), so idle or silent clients let go.
  DOCENT_H2_IDLE_TIMEOUT_MS: positiveInt.default(60_000),
  // Open streams (WatchAgentJob; SSE and streamed RPC answers) one key may hold at once. An assistant key is shared by
  // every visitor of a docs site, so its cap bounds the site's concurrent answers and is higher.
  DOCENT_STREAMS_PER_ADMIN_KEY: positiveInt.max(10_000).default(10),
  DOCENT_STREAMS_PER_ASSISTANT_KEY: positiveInt.max(10_000).default(100),
  // How often a key with open streams is looked up again, so a revoked key's streams end within this bound.
  DOCENT_STREAM_KEY_RECHECK_MS: positiveInt.min(50).default(5_000),
  DOCENT_LIMIT_JOBS_PER_HOUR: positiveInt.default(100),
  DOCENT_LIMIT_ASSISTANT_PER_KEY_MONTH: positiveInt.default(10_000),
  DOCENT_LIMIT_ASSISTANT_PER_ORG_HOUR: positiveInt.default(10_000),
  // Well below the per-key quota: one address (an IPv6 /64) must not be able to spend a public key's month in a day.
  DOCENT_LIMIT_ASSISTANT_PER_IP_DAY: positiveInt.default(1_000),
  DOCENT_LIMIT_SEARCH_PER_KEY_MONTH: positiveInt.default(10_000),
  DOCENT_LIMIT_SEARCH_PER_ORG_HOUR: positiveInt.default(10_000),
  DOCENT_LIMIT_SEARCH_PER_IP_DAY: positiveInt.default(1_000),
  // How stale an API key, project or allowed origin read from MongoDB may be when the gateway reuses it; 0 reads every time.
  DOCENT_LOOKUP_CACHE_MS: z.coerce.number().int().min(0).max(60_000).default(1_000),
  // Earlier turns of a conversation shown to the model, newest first, until this estimate of tokens is reached.
  DOCENT_ASSISTANT_HISTORY_TOKENS: z.coerce.number().int().min(0).max(1_000_000).default(4_000),
  // Below this cosine between a question and its nearest passage the docs do not cover it (no citations); 0 turns it off.
  DOCENT_RELEVANCE_FLOOR: z.coerce.number().min(0).max(1).default(0.35),
  // A model answer that has not started within the first bound, or goes silent mid-answer for the second, is ended
  // with an `unavailable` error event, so a stalled provider never holds a reader's stream slot (docs/decisions-assistant.md).
  DOCENT_ASSISTANT_MODEL_FIRST_CHUNK_MS: positiveInt.max(600_000).default(60_000),
  DOCENT_ASSISTANT_MODEL_CHUNK_GAP_MS: positiveInt.max(600_000).default(20_000),
  // Addresses of reverse proxies whose X-Forwarded-For is believed; unset means the socket's address is the client.
  DOCENT_TRUSTED_PROXY: z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((a) => a.trim())
        .filter(Boolean),
    )
    .refine((list) => list.every((a) => isIP(a) !== 0), 'must be a comma-separated list of IP addresses')
    .default([]),
  // Browser origins that may call the Connect/gRPC-web API and the agent REST paths of every project (docs/decisions-ux.md).
  DOCENT_CORS_ORIGINS: originList.default([]),
  // The built playground page served at /playground/.
  DOCENT_PLAYGROUND_DIR: z.string().default(path.join(packageRoot(), 'dist', 'playground')),
  // The built embeddable assistant served at /widget.js and /widget.mjs (widget/vite.config.mts).
  DOCENT_WIDGET_DIR: z.string().default(path.join(packageRoot(), 'dist', 'widget')),
  // Where the `docent` CLI reaches a running gateway, and the admin key it sends (`docent jobs watch`).
  DOCENT_API_URL: z.url().default('http://127.0.0.1:8080'),
  DOCENT_API_KEY: z.string().optional(),
  // OpenTelemetry traces go to this OTLP/HTTP endpoint (e.g. http://127.0.0.1:4318/v1/traces); unset means tracing is off.
  DOCENT_OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  // Bearer token a Prometheus scraper sends to GET /metrics; unset leaves /metrics refusing everyone.
  DOCENT_METRICS_TOKEN: z.string().min(24, 'must be at least 24 characters').optional(),
});

export interface Config {
  host: string;
  httpPort: number;
  grpcPort: number;
  mongo: { url: string; db: string; readConcern?: ReadConcernLevel; writeConcern?: 'majority' | number };
  /** One or more node URLs; `replicas` copies of each index live on other nodes. */
  elasticsearch: { nodes: string[]; indexPrefix: string; replicas: number; auth?: EsAuth; caCertificate?: Buffer };
  /** The embedding model folder (model.onnx, tokenizer.json); undefined when DOCENT_EMBEDDINGS=off. */
  embeddingModelDir?: string;
  /** Vectors by text hash shared between processes (DOCENT_EMBEDDING_CACHE_DIR); undefined keeps none. */
  embeddingCacheDir?: string;
  temporal: TemporalConfig;
  /** A prebuilt workflow bundle (DOCENT_WORKFLOW_BUNDLE); undefined means each worker bundles the workflows at start. */
  workflowBundlePath?: string;
  /** The default model (the catalog's first), as the assistant and model-less checks use it. */
  model: { provider?: 'openai' | 'anthropic' | 'openai-compatible'; id?: string; baseUrl?: string; apiKey?: string };
  /** The models jobs may choose (src/llm/model-catalog.ts), the default first; empty when no model is configured. */
  models: CatalogModel[];
  /** GitHub (or Enterprise): REST API, where `owner/name` repositories are cloned from, and the token or App for both. */
  github: GitHubSettings;
  agent: {
    branchPrefix: string;
    workspaceDir: string;
    setupCache?: SetupCacheConfig;
    maxSteps: number;
    heartbeatTimeoutMs: number;
    cloneWaitMs: number;
    repairRounds: number;
    prices: PriceTable;
    reconciler: boolean;
  };
  /** Encrypts secrets docent must be able to read back (webhook signing secrets); undefined means webhooks are off. */
  secretKey?: Buffer;
  /** GitHub's webhooks to POST /github/webhook: off (404) without a secret; `mention` is the handle that steers a job. */
  githubWebhooks: { secret?: string; mention: string };
  /** Where repository code runs (README, "Security model"); undefined when DOCENT_SANDBOX=off. */
  sandbox?: SandboxConfig;
  /** CIDRs outbound URLs may reach although private, loopback or link-local. */
  allowPrivateNetworks: string[];
  /** Bounds of one crawl of a published docs site. */
  crawl: { concurrency: number; maxPages: number; maxPageBytes: number };
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  shutdownGraceMs: number;
  dependencyTimeoutMs: number;
  requestTimeoutMs: number;
  /** Bounds of the public edge (docs/decisions.md, "Edge"). */
  edge: { h2IdleTimeoutMs: number; streamsPerKey: { admin: number; assistant: number }; streamKeyRecheckMs: number };
  /** Rate limits (README "Keys and limits"). */
  limits: {
    jobsPerProjectHour: number;
    assistantPerKeyMonth: number;
    assistantPerOrgHour: number;
    assistantPerIpDay: number;
    searchPerKeyMonth: number;
    searchPerOrgHour: number;
    searchPerIpDay: number;
  };
  /** Milliseconds an API key, project or allowed-origin lookup may be reused; the bound on how late a revocation bites. */
  lookupCacheMs: number;
  /** The estimated tokens of earlier turns the model sees (src/assistant/history-budget.ts). */
  assistant: { historyTokens: number; relevanceFloor: number; modelFirstChunkMs: number; modelChunkGapMs: number };
  trustedProxies: string[];
  /** Origins allowed, besides each project's own, to call Connect and agent REST paths from a browser. */
  corsOrigins: string[];
  playgroundDir: string;
  widgetDir: string;
  /** The gateway as the CLI calls it. */
  api: { url: string; key?: string };
  /** OTLP/HTTP traces endpoint; tracing is off when unset. */
  otlpEndpoint?: string;
  /** The bearer token of GET /metrics; undefined means /metrics answers 401 to everyone. */
  metricsToken?: string;
}

/** How docent signs in to Elasticsearch with security on. */
export type EsAuth = { username: string; password: string } | { apiKey: string };

export type ReadConcernLevel = 'local' | 'available' | 'majority' | 'linearizable' | 'snapshot';

export interface TemporalConfig {
  address: string;
  namespace: string;
  uiUrl: string;
  /** The most a create or follow-up waits for a workflow start or signal; then it answers 503 and undoes what it wrote. */
  startTimeoutMs: number;
  taskQueuePrefix: string;
  /** Set when the connection uses TLS; `clientCertPair` makes it mTLS. */
  tls?: { serverRootCACertificate?: Buffer; clientCertPair?: { crt: Buffer; key: Buffer }; serverNameOverride?: string };
  /** Temporal Cloud API key (sent as a bearer token over TLS). */
  apiKey?: string;
  /** Payload encryption keys: `encryptWith` names the key new payloads use; all of them decrypt. */
  payloadKeys?: { encryptWith: string; keys: ReadonlyMap<string, Buffer> };
  /** With payload keys set, whether payloads that were never encrypted are still read (a migration window). */
  allowPlaintextPayloads: boolean;
  /** Token of the gateway's codec endpoint (POST /codec/decode, /codec/encode). */
  codecToken?: string;
}

/** The worker's cache of setup results (DOCENT_SETUP_CACHE_*); absent when DOCENT_SETUP_CACHE=off. */
export interface SetupCacheConfig {
  dir: string;
  /** The most the cache's archives may take together; the least recently used go first. */
  maxBytes: number;
}

export interface SandboxConfig {
  bwrapPath: string;
  limits: SandboxLimits;
  /** Used only when the worker runs as root: RLIMIT_NPROC does not hold for uid 0. */
  runAs: { uid: number; gid: number };
  readOnlyPaths: string[];
  /** DOCENT_SANDBOX_EGRESS_ALLOW: private endpoints the egress proxy lets sandboxes reach. */
  egressAllow: EgressAllowRule[];
  /** DOCENT_SANDBOX_CGROUP: auto, off or a delegated cgroup v2 directory (src/sandbox/cgroup.ts). */
  cgroup: string;
}

const mib = (n: number) => n * 1024 * 1024;

/** Thrown when a setting is missing or malformed; the message names every bad setting. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Settings = z.infer<typeof settings>;

function temporalConfig(s: Settings): TemporalConfig {
  const tlsAsked =
    s.DOCENT_TEMPORAL_TLS === 'on' ||
    (s.DOCENT_TEMPORAL_TLS !== 'off' && Boolean(s.DOCENT_TEMPORAL_TLS_CERT || s.DOCENT_TEMPORAL_TLS_CA || s.DOCENT_TEMPORAL_TLS_SERVER_NAME || s.DOCENT_TEMPORAL_API_KEY));
  return {
    address: s.DOCENT_TEMPORAL_ADDRESS,
    namespace: s.DOCENT_TEMPORAL_NAMESPACE,
    uiUrl: s.DOCENT_TEMPORAL_UI_URL,
    startTimeoutMs: s.DOCENT_TEMPORAL_START_TIMEOUT_MS,
    taskQueuePrefix: s.DOCENT_TASK_QUEUE_PREFIX,
    tls: tlsAsked
      ? {
          ...(s.DOCENT_TEMPORAL_TLS_CA && { serverRootCACertificate: s.DOCENT_TEMPORAL_TLS_CA }),
          ...(s.DOCENT_TEMPORAL_TLS_CERT && s.DOCENT_TEMPORAL_TLS_KEY && { clientCertPair: { crt: s.DOCENT_TEMPORAL_TLS_CERT, key: s.DOCENT_TEMPORAL_TLS_KEY } }),
          ...(s.DOCENT_TEMPORAL_TLS_SERVER_NAME && { serverNameOverride: s.DOCENT_TEMPORAL_TLS_SERVER_NAME }),
        }
      : undefined,
    apiKey: s.DOCENT_TEMPORAL_API_KEY,
    payloadKeys: s.DOCENT_PAYLOAD_KEYS,
    allowPlaintextPayloads: s.DOCENT_PAYLOAD_ALLOW_PLAINTEXT === '1',
    codecToken: s.DOCENT_CODEC_TOKEN,
  };
}

export interface GitHubSettings {
  apiUrl: string;
  gitUrl: string;
  token?: string;
  /** When set, jobs use installation tokens of this App instead of `token` (src/github/credentials.ts). */
  app?: { id: string; privateKey: HiddenText };
}

/** A secret kept in the config: printed, logged or serialised as `[redacted]`; `reveal()` gives the text to the one reader. */
export class HiddenText {
  readonly #text: string;
  constructor(text: string) {
    this.#text = text;
  }
  reveal(): string {
    return this.#text;
  }
  toString(): string {
    return '[redacted]';
  }
  toJSON(): string {
    return '[redacted]';
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return '[redacted]';
  }
}

/** The App's id and private key (inline PEM or a file), checked to be an RSA private key now rather than at the first job. */
function githubApp(s: z.infer<typeof settings>): GitHubSettings['app'] {
  const inline = s.DOCENT_GITHUB_APP_PRIVATE_KEY;
  const file = s.DOCENT_GITHUB_APP_PRIVATE_KEY_FILE;
  if (!s.DOCENT_GITHUB_APP_ID && !inline && !file) return undefined;
  if (inline && file) throw new ConfigError('invalid configuration: give DOCENT_GITHUB_APP_PRIVATE_KEY or DOCENT_GITHUB_APP_PRIVATE_KEY_FILE, not both');
  if (!s.DOCENT_GITHUB_APP_ID || (!inline && !file)) throw new ConfigError('invalid configuration: DOCENT_GITHUB_APP_ID and DOCENT_GITHUB_APP_PRIVATE_KEY (or _FILE) go together');
  let pemText: string;
  try {
    pemText = inline ?? readFileSync(file!, 'utf8');
  } catch {
    throw new ConfigError(`invalid configuration: DOCENT_GITHUB_APP_PRIVATE_KEY_FILE: cannot read the file ${file}`);
  }
  // Variables often carry the PEM with its line breaks written as \n.
  pemText = pemText.replace(/\\n/g, '\n');
  try {
    if (createPrivateKey(pemText).asymmetricKeyType !== 'rsa') throw new Error('not RSA');
  } catch {
    // The key's text never appears in the message.
    throw new ConfigError('invalid configuration: the GitHub App private key is not an RSA private key in PEM form (the .pem file GitHub gives)');
  }
  return { id: s.DOCENT_GITHUB_APP_ID, privateKey: new HiddenText(pemText) };
}

/**
 * The catalog: DOCENT_MODELS with DOCENT_MODEL_BASE_URL and DOCENT_MODEL_API_KEY as every entry's defaults, or else the
 * one model of DOCENT_MODEL_PROVIDER and DOCENT_MODEL, priced from DOCENT_MODEL_PRICES; empty when neither is complete.
 */
function modelCatalog(s: Settings): CatalogModel[] {
  const shared = { ...(s.DOCENT_MODEL_BASE_URL && { baseUrl: s.DOCENT_MODEL_BASE_URL }), ...(s.DOCENT_MODEL_API_KEY && { apiKey: s.DOCENT_MODEL_API_KEY }) };
  if (s.DOCENT_MODELS) {
    const models = s.DOCENT_MODELS.map((m) => ({ ...shared, ...m }));
    const unreachable = models.find((m) => m.provider === 'openai-compatible' && !m.baseUrl);
    if (unreachable) throw new ConfigError(`invalid configuration: DOCENT_MODELS: ${unreachable.name} is openai-compatible and needs a baseUrl (or DOCENT_MODEL_BASE_URL)`);
    return models;
  }
  if (!s.DOCENT_MODEL_PROVIDER || !s.DOCENT_MODEL) return [];
  const price = s.DOCENT_MODEL_PRICES[s.DOCENT_MODEL];
  return [{ name: s.DOCENT_MODEL, provider: s.DOCENT_MODEL_PROVIDER, ...shared, ...(price && { prices: price }), images: s.DOCENT_MODEL_IMAGES === 'on' }];
}

/** The default model as the single-model settings describe it; from the catalog's first entry when DOCENT_MODELS is set. */
function defaultModel(s: Settings, models: CatalogModel[]): Config['model'] {
  const first = s.DOCENT_MODELS ? models[0] : undefined;
  if (!first) return { provider: s.DOCENT_MODEL_PROVIDER, id: s.DOCENT_MODEL, baseUrl: s.DOCENT_MODEL_BASE_URL, apiKey: s.DOCENT_MODEL_API_KEY };
  return { provider: first.provider, id: first.name, baseUrl: first.baseUrl, apiKey: first.apiKey };
}

/** Parses the settings once at start-up; empty values count as unset (docker compose passes `${X:-}`). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([k, v]) => k.startsWith('DOCENT_') && v !== ''));
  const parsed = settings.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  const s = parsed.data;
  if (!s.DOCENT_TEMPORAL_TLS_CERT !== !s.DOCENT_TEMPORAL_TLS_KEY) throw new ConfigError('invalid configuration: DOCENT_TEMPORAL_TLS_CERT and DOCENT_TEMPORAL_TLS_KEY go together (mTLS)');
  if (!s.DOCENT_ES_USERNAME !== !s.DOCENT_ES_PASSWORD) throw new ConfigError('invalid configuration: DOCENT_ES_USERNAME and DOCENT_ES_PASSWORD go together');
  if (s.DOCENT_ES_API_KEY && s.DOCENT_ES_USERNAME) throw new ConfigError('invalid configuration: give Elasticsearch either DOCENT_ES_API_KEY or DOCENT_ES_USERNAME and DOCENT_ES_PASSWORD, not both');
  if (s.DOCENT_CODEC_TOKEN && !s.DOCENT_PAYLOAD_KEYS) throw new ConfigError('invalid configuration: DOCENT_CODEC_TOKEN needs DOCENT_PAYLOAD_KEYS (the codec endpoint decodes with them)');
  if (s.DOCENT_MODELS && (s.DOCENT_MODEL || s.DOCENT_MODEL_PROVIDER)) throw new ConfigError('invalid configuration: give DOCENT_MODELS or DOCENT_MODEL_PROVIDER and DOCENT_MODEL, not both');
  const models = modelCatalog(s);
  const [sandboxUid, sandboxGid] = s.DOCENT_SANDBOX_USER.split(':').map(Number);
  return {
    host: s.DOCENT_HOST,
    httpPort: s.DOCENT_HTTP_PORT,
    grpcPort: s.DOCENT_GRPC_PORT,
    mongo: {
      url: s.DOCENT_MONGO_URL,
      db: s.DOCENT_MONGO_DB,
      readConcern: s.DOCENT_MONGO_READ_CONCERN,
      writeConcern: s.DOCENT_MONGO_WRITE_CONCERN === undefined || s.DOCENT_MONGO_WRITE_CONCERN === 'majority' ? s.DOCENT_MONGO_WRITE_CONCERN : Number(s.DOCENT_MONGO_WRITE_CONCERN),
    },
    elasticsearch: {
      nodes: s.DOCENT_ES_URL,
      indexPrefix: s.DOCENT_ES_INDEX_PREFIX,
      replicas: s.DOCENT_ES_REPLICAS,
      auth: s.DOCENT_ES_API_KEY ? { apiKey: s.DOCENT_ES_API_KEY } : s.DOCENT_ES_USERNAME ? { username: s.DOCENT_ES_USERNAME, password: s.DOCENT_ES_PASSWORD! } : undefined,
      caCertificate: s.DOCENT_ES_CA,
    },
    embeddingModelDir: s.DOCENT_EMBEDDINGS === 'off' ? undefined : (s.DOCENT_EMBEDDING_MODEL_DIR ?? path.join(s.DOCENT_CACHE, 'models', 'all-minilm-l6-v2-q')),
    embeddingCacheDir: s.DOCENT_EMBEDDING_CACHE_DIR,
    temporal: temporalConfig(s),
    workflowBundlePath: s.DOCENT_WORKFLOW_BUNDLE,
    model: defaultModel(s, models),
    models,
    github: { apiUrl: s.DOCENT_GITHUB_API_URL, gitUrl: s.DOCENT_GITHUB_GIT_URL, token: s.DOCENT_GITHUB_TOKEN, app: githubApp(s) },
    agent: {
      branchPrefix: s.DOCENT_BRANCH_PREFIX,
      workspaceDir: s.DOCENT_WORKSPACE_DIR,
      ...(s.DOCENT_SETUP_CACHE === 'on' ? { setupCache: { dir: s.DOCENT_SETUP_CACHE_DIR ?? path.join(s.DOCENT_WORKSPACE_DIR, '.setup-cache'), maxBytes: s.DOCENT_SETUP_CACHE_MAX_BYTES } } : {}),
      maxSteps: s.DOCENT_AGENT_MAX_STEPS,
      heartbeatTimeoutMs: s.DOCENT_AGENT_HEARTBEAT_TIMEOUT_MS,
      cloneWaitMs: s.DOCENT_AGENT_CLONE_WAIT_MS,
      // Off in tests that spawn workers with a throwaway queue prefix: each would leave a schedule in the shared server.
      reconciler: s.DOCENT_RECONCILER === 'on',
      repairRounds: s.DOCENT_AGENT_REPAIR_ROUNDS,
      prices: catalogPrices(models, s.DOCENT_MODEL_PRICES),
    },
    secretKey: s.DOCENT_SECRET_KEY === undefined ? undefined : Buffer.from(s.DOCENT_SECRET_KEY, 'base64'),
    githubWebhooks: { secret: s.DOCENT_GITHUB_WEBHOOK_SECRET, mention: s.DOCENT_GITHUB_MENTION },
    sandbox:
      s.DOCENT_SANDBOX === 'off'
        ? undefined
        : {
            bwrapPath: s.DOCENT_SANDBOX_BWRAP,
            limits: {
              timeoutMs: s.DOCENT_SANDBOX_TIMEOUT_MS,
              memoryBytes: mib(s.DOCENT_SANDBOX_MEMORY_MB),
              maxProcesses: s.DOCENT_SANDBOX_MAX_PROCESSES,
              maxFileBytes: mib(s.DOCENT_SANDBOX_MAX_FILE_MB),
              maxDiskBytes: mib(s.DOCENT_SANDBOX_MAX_DISK_MB),
              tmpBytes: mib(s.DOCENT_SANDBOX_TMP_MB),
              shmBytes: mib(s.DOCENT_SANDBOX_SHM_MB),
              maxInodes: s.DOCENT_SANDBOX_MAX_INODES,
              ...(s.DOCENT_SANDBOX_CPUS !== undefined ? { cpus: s.DOCENT_SANDBOX_CPUS } : {}),
            },
            egressAllow: s.DOCENT_SANDBOX_EGRESS_ALLOW,
            cgroup: s.DOCENT_SANDBOX_CGROUP,
            runAs: { uid: sandboxUid!, gid: sandboxGid! },
            readOnlyPaths: s.DOCENT_SANDBOX_READ_ONLY_PATHS,
          },
    allowPrivateNetworks: s.DOCENT_ALLOW_PRIVATE_NETWORKS,
    crawl: { concurrency: s.DOCENT_CRAWL_CONCURRENCY, maxPages: s.DOCENT_CRAWL_MAX_PAGES, maxPageBytes: s.DOCENT_CRAWL_MAX_PAGE_BYTES },
    logLevel: s.DOCENT_LOG_LEVEL,
    shutdownGraceMs: s.DOCENT_SHUTDOWN_GRACE_MS,
    dependencyTimeoutMs: s.DOCENT_DEPENDENCY_TIMEOUT_MS,
    requestTimeoutMs: s.DOCENT_REQUEST_TIMEOUT_MS,
    edge: {
      h2IdleTimeoutMs: s.DOCENT_H2_IDLE_TIMEOUT_MS,
      streamsPerKey: { admin: s.DOCENT_STREAMS_PER_ADMIN_KEY, assistant: s.DOCENT_STREAMS_PER_ASSISTANT_KEY },
      streamKeyRecheckMs: s.DOCENT_STREAM_KEY_RECHECK_MS,
    },
    limits: {
      jobsPerProjectHour: s.DOCENT_LIMIT_JOBS_PER_HOUR,
      assistantPerKeyMonth: s.DOCENT_LIMIT_ASSISTANT_PER_KEY_MONTH,
      assistantPerOrgHour: s.DOCENT_LIMIT_ASSISTANT_PER_ORG_HOUR,
      assistantPerIpDay: s.DOCENT_LIMIT_ASSISTANT_PER_IP_DAY,
      searchPerKeyMonth: s.DOCENT_LIMIT_SEARCH_PER_KEY_MONTH,
      searchPerOrgHour: s.DOCENT_LIMIT_SEARCH_PER_ORG_HOUR,
      searchPerIpDay: s.DOCENT_LIMIT_SEARCH_PER_IP_DAY,
    },
    lookupCacheMs: s.DOCENT_LOOKUP_CACHE_MS,
    assistant: {
      historyTokens: s.DOCENT_ASSISTANT_HISTORY_TOKENS,
      relevanceFloor: s.DOCENT_RELEVANCE_FLOOR,
      modelFirstChunkMs: s.DOCENT_ASSISTANT_MODEL_FIRST_CHUNK_MS,
      modelChunkGapMs: s.DOCENT_ASSISTANT_MODEL_CHUNK_GAP_MS,
    },
    trustedProxies: s.DOCENT_TRUSTED_PROXY,
    corsOrigins: s.DOCENT_CORS_ORIGINS,
    playgroundDir: s.DOCENT_PLAYGROUND_DIR,
    widgetDir: s.DOCENT_WIDGET_DIR,
    otlpEndpoint: s.DOCENT_OTEL_EXPORTER_OTLP_ENDPOINT,
    api: { url: s.DOCENT_API_URL, key: s.DOCENT_API_KEY },
    metricsToken: s.DOCENT_METRICS_TOKEN,
  };
}
