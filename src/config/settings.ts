// Every setting docent reads, declared once: its variable, type, default and description. Nothing else reads
// process.env. The tree has the shape of the values it produces; src/config/index.ts turns the few that combine
// (TLS, credentials, the model catalog, the sandbox) into the Config the services take, and docs/configuration.md is
// generated from it (npm run lint fails when that page is stale).
import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { priceTableSchema } from '../jobs/prices';
import { modelCatalogSchema } from '../llm/model-catalog';
import { setting } from './declare';
import { cidrList, commaList, egressAllowList, json, megabytes, nodeList, onOff, originList, payloadKeys, pem, port, positiveInt } from './values';

// The checkout or install folder: this file runs from src/config under jest and from dist/src/config when compiled.
function packageRoot(): string {
  let dir = __dirname;
  while (!existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

const millis = (min: number, fallback: number) => positiveInt.min(min).default(fallback);

export const declared = {
  host: setting('DOCENT_HOST', z.string().default('127.0.0.1'), 'the address the gateway listens on (both ports)'),
  httpPort: setting('DOCENT_HTTP_PORT', port.default(8080), 'HTTP/1.1 port: REST, SSE, Connect and gRPC-web'),
  grpcPort: setting('DOCENT_GRPC_PORT', port.default(8081), 'h2c port: gRPC, and Connect over HTTP/2'),
  mongo: {
    url: setting(
      'DOCENT_MONGO_URL',
      z
        .string()
        .regex(/^mongodb(\+srv)?:\/\//, 'must be a mongodb:// URL')
        .default('mongodb://127.0.0.1:27017'),
      'the system of record (MongoDB or FerretDB), with its user and password',
      { secret: true },
    ),
    db: setting(
      'DOCENT_MONGO_DB',
      z
        .string()
        .regex(/^[A-Za-z0-9_-]{1,63}$/, 'must be a plain database name')
        .default('docent'),
      'the database docent keeps its collections in',
    ),
    readConcern: setting(
      'DOCENT_MONGO_READ_CONCERN',
      z.enum(['local', 'available', 'majority', 'linearizable', 'snapshot']).optional(),
      'read concern on a replica set (docs/operations.md, "Clusters"); unset leaves the server’s or the URL’s',
    ),
    writeConcern: setting(
      'DOCENT_MONGO_WRITE_CONCERN',
      z
        .string()
        .regex(/^(majority|[0-9]{1,2})$/, 'must be majority or a number of members')
        .transform((v) => (v === 'majority' ? v : Number(v)))
        .optional(),
      '`majority` or a number of members on a replica set; unset leaves the server’s or the URL’s',
    ),
  },
  elasticsearch: {
    nodes: setting('DOCENT_ES_URL', nodeList.default(['http://127.0.0.1:9200']), 'one node, or several comma-separated (a cluster): requests go round the list and skip a node that stops answering'),
    replicas: setting('DOCENT_ES_REPLICAS', z.coerce.number().int().min(0).max(10).default(0), 'copies of each documentation index on other nodes; 0 suits one node, 1 or more a cluster'),
    username: setting('DOCENT_ES_USERNAME', z.string().optional(), 'Elasticsearch with security on: a user (with DOCENT_ES_PASSWORD)'),
    password: setting('DOCENT_ES_PASSWORD', z.string().optional(), 'the password of DOCENT_ES_USERNAME', { secret: true }),
    apiKey: setting('DOCENT_ES_API_KEY', z.string().optional(), 'or an Elasticsearch API key (the base64 `encoded` value), instead of a user', { secret: true }),
    caCertificate: setting('DOCENT_ES_CA', pem.optional(), 'the CA of Elasticsearch’s HTTPS certificate when it is private (PEM, inline or a file path)'),
    indexPrefix: setting(
      'DOCENT_ES_INDEX_PREFIX',
      z
        .string()
        .regex(/^[a-z0-9_-]{1,40}$/, 'must be lowercase letters, digits, - or _')
        .default('docent'),
      'the prefix of every index and alias docent makes',
    ),
  },
  embeddings: setting('DOCENT_EMBEDDINGS', onOff.default('on'), 'hybrid retrieval: BM25 plus vectors of the local embedding model; `off` is BM25 alone'),
  cacheDir: setting('DOCENT_CACHE', z.string().default(path.join(os.homedir(), '.cache', 'docent')), 'where infra/stack.sh installs downloads and the embedding model', {
    shownDefault: '~/.cache/docent',
  }),
  embeddingModelDir: setting('DOCENT_EMBEDDING_MODEL_DIR', z.string().optional(), '`model.onnx` and `tokenizer.json` (`npm run stack -- install model` puts them there)', {
    shownDefault: '$DOCENT_CACHE/models/all-minilm-l6-v2-q',
  }),
  embeddingCacheDir: setting(
    'DOCENT_EMBEDDING_CACHE_DIR',
    z.string().optional(),
    'a folder where workers keep each passage’s vector by text hash, so the same pages ingested into another index or domain on this host are embedded once; a process whose texts are all there never loads the model',
  ),
  embeddingThreads: setting(
    'DOCENT_EMBEDDING_THREADS',
    z.coerce.number().int().min(0).max(256).default(0),
    'model threads a worker embeds passages on (one inference each, off the event loop); 0: one per core the process may use',
  ),
  embeddingBatch: setting(
    'DOCENT_EMBEDDING_BATCH',
    positiveInt.max(256).default(4),
    'passages a model thread embeds per turn during an ingest; a question arriving meanwhile waits for at most one such batch',
  ),
  workflowBundlePath: setting('DOCENT_WORKFLOW_BUNDLE', z.string().optional(), 'a workflow bundle built ahead (`bundleWorkflowCode`’s output as a file); workers load it instead of bundling at start'),
  temporal: {
    address: setting('DOCENT_TEMPORAL_ADDRESS', z.string().default('127.0.0.1:7233'), 'the Temporal frontend'),
    namespace: setting('DOCENT_TEMPORAL_NAMESPACE', z.string().default('default'), 'the Temporal namespace'),
    uiUrl: setting('DOCENT_TEMPORAL_UI_URL', z.url().default('http://127.0.0.1:8233'), 'shown to operators; the one browser origin the codec endpoint allows'),
    startTimeoutMs: setting(
      'DOCENT_TEMPORAL_START_TIMEOUT_MS',
      positiveInt.default(5_000),
      'how long a create or follow-up waits for Temporal (its retries included) before it answers 503 `unavailable`',
    ),
    workerMaxActivities: setting(
      'DOCENT_WORKER_MAX_ACTIVITIES',
      positiveInt.max(1000).default(100),
      'activities a worker runs at once on each of its task queues (agent steps among them); more wait in Temporal, where projects take turns',
    ),
    workerFairness: setting(
      'DOCENT_WORKER_FAIRNESS',
      onOff.default('on').transform((v) => v === 'on'),
      'what steps wait on inside a worker (GitHub’s spacing of its requests) is taken by project in turn, as the task queues dispatch them; `off`: first come first served (the benchmark’s floor)',
      { shownDefault: 'on' },
    ),
    heartbeatThrottleMs: setting(
      'DOCENT_WORKER_HEARTBEAT_THROTTLE_MS',
      millis(100, 60_000),
      'at most this long between a running activity’s heartbeats reaching Temporal, and so between updates of an ingest’s progress (Temporal uses 80 % of the heartbeat timeout when that is shorter)',
    ),
    stickyTimeoutMs: setting(
      'DOCENT_WORKER_STICKY_TIMEOUT_MS',
      millis(1000, 10_000),
      'how long a workflow’s next task waits for the worker that ran its last one (and holds it in memory) before any worker takes it: the delay a crashed worker adds to its workflows',
    ),
    taskQueuePrefix: setting(
      'DOCENT_TASK_QUEUE_PREFIX',
      z
        .string()
        .regex(/^[A-Za-z0-9_.-]{0,60}$/, 'must be letters, digits, ., - or _')
        .default(''),
      'keeps deployments sharing a namespace apart',
    ),
    tlsMode: setting('DOCENT_TEMPORAL_TLS', onOff.optional(), '`on` for TLS with a public CA and no other setting; `off` forces plaintext', {
      shownDefault: 'on when any TLS setting or an API key is set',
    }),
    tlsCert: setting('DOCENT_TEMPORAL_TLS_CERT', pem.optional(), 'client certificate (PEM, inline or a file path): mTLS, with DOCENT_TEMPORAL_TLS_KEY'),
    tlsKey: setting('DOCENT_TEMPORAL_TLS_KEY', pem.optional(), 'the client certificate’s key (PEM, inline or a file path)', { secret: true }),
    tlsCa: setting('DOCENT_TEMPORAL_TLS_CA', pem.optional(), 'the server’s CA when it is private'),
    tlsServerName: setting('DOCENT_TEMPORAL_TLS_SERVER_NAME', z.string().optional(), 'the name the server’s certificate carries'),
    apiKey: setting('DOCENT_TEMPORAL_API_KEY', z.string().optional(), 'Temporal Cloud API key', { secret: true }),
    payloadKeys: setting('DOCENT_PAYLOAD_KEYS', payloadKeys.optional(), '`id:base64key,…` (32-byte keys): payloads encrypted with the first, decrypted with any; clear payloads refused', {
      secret: true,
    }),
    allowPlaintextPayloads: setting(
      'DOCENT_PAYLOAD_ALLOW_PLAINTEXT',
      z
        .enum(['0', '1'])
        .default('0')
        .transform((v) => v === '1'),
      '`1` reads payloads that were never encrypted, only while workflows started before DOCENT_PAYLOAD_KEYS drain',
      { shownDefault: '0' },
    ),
    codecToken: setting(
      'DOCENT_CODEC_TOKEN',
      z.string().min(24, 'must be at least 24 characters').optional(),
      'operator token of `POST /codec/decode` and `/codec/encode` (at least 24 characters; needs DOCENT_PAYLOAD_KEYS); unset leaves the endpoint off',
      { secret: true },
    ),
  },
  model: {
    provider: setting('DOCENT_MODEL_PROVIDER', z.enum(['openai', 'anthropic', 'openai-compatible']).optional(), '`openai`, `anthropic` or `openai-compatible` (Ollama, vLLM, …)'),
    id: setting('DOCENT_MODEL', z.string().optional(), 'the model id'),
    baseUrl: setting('DOCENT_MODEL_BASE_URL', z.url().optional(), 'the model endpoint (required for `openai-compatible`); every DOCENT_MODELS entry’s default'),
    apiKey: setting('DOCENT_MODEL_API_KEY', z.string().optional(), 'the model provider’s key; every DOCENT_MODELS entry’s default', { secret: true }),
    images: setting('DOCENT_MODEL_IMAGES', onOff.default('off'), '`on`: the single DOCENT_MODEL takes images with an instruction'),
    catalog: setting(
      'DOCENT_MODELS',
      json.pipe(modelCatalogSchema).optional(),
      'JSON list of the models jobs may choose, the first the default (docs/agent-jobs.md, "Models"); an entry may state its provider’s `imageLimits`; not together with DOCENT_MODEL_PROVIDER and DOCENT_MODEL',
    ),
    prices: setting(
      'DOCENT_MODEL_PRICES',
      json.pipe(priceTableSchema).default({}),
      'USD per million tokens by model id, e.g. `{"gpt-4.1":{"input":2,"output":8}}`: turns show `costUsd`; a DOCENT_MODELS entry’s own `prices` win',
    ),
  },
  github: {
    apiUrl: setting('DOCENT_GITHUB_API_URL', z.url().default('https://api.github.com'), 'GitHub’s REST API, or an Enterprise server’s'),
    gitUrl: setting('DOCENT_GITHUB_GIT_URL', z.url().default('https://github.com'), 'where `owner/name` repositories are cloned from; the only host that gets the token'),
    token: setting('DOCENT_GITHUB_TOKEN', z.string().optional(), 'clones, pushes and opens pull requests; clones followed docs repositories; passed to git per command, never stored', {
      secret: true,
    }),
    appId: setting(
      'DOCENT_GITHUB_APP_ID',
      z
        .string()
        .regex(/^\d{1,20}$/, 'must be the App ID, a number')
        .optional(),
      'act as this GitHub App instead of the token (docs/github.md)',
    ),
    appPrivateKey: setting('DOCENT_GITHUB_APP_PRIVATE_KEY', z.string().optional(), 'the App’s private key, the PEM text (`\\n` for line breaks is fine)', { secret: true }),
    appPrivateKeyFile: setting('DOCENT_GITHUB_APP_PRIVATE_KEY_FILE', z.string().optional(), 'or a file holding it; one of the two with DOCENT_GITHUB_APP_ID'),
    sharedOrgs: setting(
      'DOCENT_GITHUB_SHARED_ORGS',
      commaList.refine((list) => list.every((p) => /^[A-Za-z0-9_.*-]{1,64}$/.test(p)), 'must be a comma-separated list of organization names or *-patterns').default(['local']),
      'the organizations that may use the token or App above (the deployment connection, docs/forges.md): each reaches every repository it can; others bring their own forge connection',
    ),
  },
  githubWebhooks: {
    secret: setting(
      'DOCENT_GITHUB_WEBHOOK_SECRET',
      z.string().min(16, 'must be at least 16 characters').optional(),
      'the GitHub App’s webhook secret, which `POST /github/webhook` verifies (`X-Hub-Signature-256`); at least 16 characters. With a token, each project has its own (`docent project webhook-secret`, needs DOCENT_SECRET_KEY) and this one verifies only push and ping deliveries',
      { secret: true },
    ),
    mention: setting(
      'DOCENT_GITHUB_MENTION',
      z
        .string()
        .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/, 'must be a GitHub login or app slug, without the @')
        .default('docent'),
      'the handle a pull-request comment mentions (`@docent`) to steer its job',
    ),
  },
  agent: {
    branchPrefix: setting(
      'DOCENT_BRANCH_PREFIX',
      z
        .string()
        .regex(/^[A-Za-z0-9._/-]{1,40}$/, 'must be a plain branch name prefix')
        .default('docent/'),
      'job branches are `<prefix><jobId>`',
    ),
    workspaceDir: setting(
      'DOCENT_WORKSPACE_DIR',
      z.string().optional(),
      'the worker’s per-job clones; each deployment’s workers sweep only the clones they made (docs/security.md, "Workspace folders")',
      { shownDefault: '$TMPDIR/docent-workspaces-<deployment> (12 hex digits of the MongoDB servers and database and the Temporal namespace and queue prefix)' },
    ),
    setupCache: setting('DOCENT_SETUP_CACHE', onOff.default('on'), '`off`: every setup runs, nothing is stored (docs/agent-jobs.md, "Cached setup")'),
    setupCacheDir: setting('DOCENT_SETUP_CACHE_DIR', z.string().optional(), 'where this worker keeps setup results', { shownDefault: '$DOCENT_WORKSPACE_DIR/.setup-cache' }),
    setupCacheMaxBytes: setting('DOCENT_SETUP_CACHE_MAX_BYTES', positiveInt.default(10 * 1024 * 1024 * 1024), 'the most setup results take together before the least recently used go (10 GiB)'),
    maxSteps: setting('DOCENT_AGENT_MAX_STEPS', positiveInt.max(200).default(25), 'the agent’s tool-loop steps per turn'),
    heartbeatTimeoutMs: setting('DOCENT_AGENT_HEARTBEAT_TIMEOUT_MS', millis(1000, 60_000), 'how long a working agent may go without a heartbeat before Temporal retries it'),
    workspaceSweepMs: setting(
      'DOCENT_WORKSPACE_SWEEP_MS',
      millis(100, 60_000),
      'how often a worker removes the clones of jobs that have ended and that none of its steps is using (a retried, stopped or moved turn can leave one)',
    ),
    cloneWaitMs: setting('DOCENT_AGENT_CLONE_WAIT_MS', millis(1000, 60_000), 'how long a turn’s step waits for the worker holding its clone (say, restarting) before the turn starts over elsewhere'),
    // Off in tests that spawn workers with a throwaway queue prefix: each would leave a schedule in the shared server.
    reconciler: setting(
      'DOCENT_RECONCILER',
      onOff.default('on').transform((v) => v === 'on'),
      'each worker ensures the job reconciler’s Temporal schedule at start (it fails active jobs no workflow runs)',
      { shownDefault: 'on' },
    ),
    repairRounds: setting('DOCENT_AGENT_REPAIR_ROUNDS', z.coerce.number().int().min(0).max(10).default(2), 'rounds the agent gets to fix the project’s checks after they fail'),
  },
  secretKey: setting(
    'DOCENT_SECRET_KEY',
    z
      .string()
      .refine((v) => Buffer.from(v, 'base64').length === 32, 'must be 32 bytes in base64 (openssl rand -base64 32)')
      .transform((v) => Buffer.from(v, 'base64'))
      .optional(),
    '32 bytes in base64 (`openssl rand -base64 32`): encrypts webhook secrets and project secrets at rest; webhooks and project secrets need it (gateway, worker and CLI)',
    { secret: true, shownDefault: 'unset (`npm start`: made on first run in `~/.cache/docent/secret-key`)' },
  ),
  sandbox: {
    mode: setting('DOCENT_SANDBOX', z.enum(['bwrap', 'off']).default('bwrap'), '`off` runs no repository code at all (no `run_command`, no checks)'),
    bwrapPath: setting('DOCENT_SANDBOX_BWRAP', z.string().default('bwrap'), 'the bubblewrap executable'),
    timeoutMs: setting('DOCENT_SANDBOX_TIMEOUT_MS', millis(100, 600_000), 'wall time of one sandboxed command; then it is killed (exit code 124)'),
    memoryMb: setting('DOCENT_SANDBOX_MEMORY_MB', megabytes.default(4096), 'per-process data limit (and the whole sandbox’s `memory.max` with cgroup v2)'),
    maxProcesses: setting('DOCENT_SANDBOX_MAX_PROCESSES', positiveInt.max(65_536).default(512), 'processes and threads per sandbox'),
    maxFileMb: setting('DOCENT_SANDBOX_MAX_FILE_MB', megabytes.default(1024), 'the largest file a command may write'),
    maxDiskMb: setting('DOCENT_SANDBOX_MAX_DISK_MB', megabytes.default(4096), 'the most the workspace disk may grow during one command'),
    tmpMb: setting('DOCENT_SANDBOX_TMP_MB', megabytes.default(512), 'the size of the sandbox’s private `/tmp`'),
    shmMb: setting('DOCENT_SANDBOX_SHM_MB', megabytes.default(64), 'the size of `/dev/shm`'),
    maxInodes: setting('DOCENT_SANDBOX_MAX_INODES', positiveInt.default(200_000), 'the most inodes the workspace filesystem may gain during one command'),
    cpus: setting('DOCENT_SANDBOX_CPUS', z.coerce.number().positive().max(1024).optional(), 'CPU cores’ worth of time per second for one command (cgroup `cpu.max`); unset: no CPU cap'),
    cgroup: setting(
      'DOCENT_SANDBOX_CGROUP',
      z
        .string()
        .refine((v) => v === 'auto' || v === 'off' || path.isAbsolute(v), 'must be auto, off or an absolute cgroup v2 directory')
        .default('auto'),
      'cgroup v2 limits per command: `auto` uses the worker’s own cgroup when delegated, `off`, or a delegated cgroup directory',
    ),
    egressAllow: setting(
      'DOCENT_SANDBOX_EGRESS_ALLOW',
      egressAllowList.default([]),
      'private endpoints (`host:port`, `CIDR:port`) sandboxes with network on may reach through the egress proxy; a loopback entry on port 1024 or higher is relayed to the same port inside the sandbox. Documentation addresses are refused like private ones: a deployment whose internet is reached through such a relay lists it here',
      {
        shownDefault: 'empty',
      },
    ),
    runAs: setting(
      'DOCENT_SANDBOX_USER',
      z
        .string()
        .regex(/^[1-9][0-9]{0,9}:[1-9][0-9]{0,9}$/, 'must be uid:gid, both non-zero, e.g. 61000:61000')
        .default('61000:61000')
        .transform((v) => {
          const [uid, gid] = v.split(':').map(Number);
          return { uid: uid!, gid: gid! };
        }),
      'the uid:gid commands run as when the worker runs as root',
      { shownDefault: '61000:61000' },
    ),
    readOnlyPaths: setting(
      'DOCENT_SANDBOX_READ_ONLY_PATHS',
      commaList.refine((list) => list.every((p) => path.isAbsolute(p)), 'must be a comma-separated list of absolute paths').default([]),
      'more host folders for the sandbox’s toolchain besides `/usr` (e.g. `/opt/node`), comma-separated',
    ),
  },
  allowPrivateNetworks: setting(
    'DOCENT_ALLOW_PRIVATE_NETWORKS',
    cidrList.default([]),
    'CIDRs that repository URLs on other hosts, webhook URLs and crawled docs sites may resolve to although private or loopback, e.g. `10.0.0.0/8`',
  ),
  crawl: {
    concurrency: setting('DOCENT_CRAWL_CONCURRENCY', z.coerce.number().int().min(1).max(32).default(4), 'pages one crawl of a docs site (`docs ingest --sitemap`) fetches at once'),
    maxPages: setting('DOCENT_CRAWL_MAX_PAGES', z.coerce.number().int().min(1).max(100_000).default(2_000), 'pages one crawl reads from the sitemap'),
    maxPageBytes: setting('DOCENT_CRAWL_MAX_PAGE_BYTES', z.coerce.number().int().min(10_000).max(100_000_000).default(5_000_000), 'bytes of one crawled page; a larger one is skipped'),
  },
  logLevel: setting('DOCENT_LOG_LEVEL', z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'), 'JSON logs (pino); keys and tokens are masked'),
  shutdownGraceMs: setting('DOCENT_SHUTDOWN_GRACE_MS', positiveInt.default(10_000), 'how long a stopping process lets work in flight finish'),
  dependencyTimeoutMs: setting('DOCENT_DEPENDENCY_TIMEOUT_MS', positiveInt.default(2_000), 'the deadline of each readiness check of MongoDB, Elasticsearch and Temporal'),
  requestTimeoutMs: setting('DOCENT_REQUEST_TIMEOUT_MS', positiveInt.default(30_000), 'the time a client has to send its whole request (both ports), or it gets 408'),
  edge: {
    h2IdleTimeoutMs: setting('DOCENT_H2_IDLE_TIMEOUT_MS', positiveInt.default(60_000), 'an h2c connection with no request in flight for this long is closed (GOAWAY)'),
    streamsPerKey: {
      admin: setting('DOCENT_STREAMS_PER_ADMIN_KEY', positiveInt.max(10_000).default(10), 'open streams (WatchAgentJob, SSE, streamed answers) one admin key may hold'),
      // An assistant key is shared by every visitor of a docs site, so its cap bounds the site's concurrent answers.
      assistant: setting('DOCENT_STREAMS_PER_ASSISTANT_KEY', positiveInt.max(10_000).default(100), 'open streams one assistant key may hold: the site’s concurrent answers'),
    },
    streamKeyRecheckMs: setting('DOCENT_STREAM_KEY_RECHECK_MS', millis(50, 5_000), 'how often a key with open streams is looked up again, so a revoked key’s streams end within this bound'),
  },
  limits: {
    jobsPerProjectHour: setting('DOCENT_LIMIT_JOBS_PER_HOUR', positiveInt.default(100), 'agent job creates and follow-ups per project per hour'),
    assistantPerKeyMonth: setting('DOCENT_LIMIT_ASSISTANT_PER_KEY_MONTH', positiveInt.default(10_000), 'assistant messages per key per month'),
    assistantPerOrgHour: setting('DOCENT_LIMIT_ASSISTANT_PER_ORG_HOUR', positiveInt.default(10_000), 'assistant messages per organization per hour'),
    // Well below the per-key quota: one address (an IPv6 /64) must not be able to spend a public key's month in a day.
    assistantPerIpDay: setting('DOCENT_LIMIT_ASSISTANT_PER_IP_DAY', positiveInt.default(1_000), 'assistant messages per client address (an IPv6 /64) per day'),
    searchPerKeyMonth: setting('DOCENT_LIMIT_SEARCH_PER_KEY_MONTH', positiveInt.default(10_000), 'searches per key per month'),
    searchPerOrgHour: setting('DOCENT_LIMIT_SEARCH_PER_ORG_HOUR', positiveInt.default(10_000), 'searches per organization per hour'),
    searchPerIpDay: setting('DOCENT_LIMIT_SEARCH_PER_IP_DAY', positiveInt.default(1_000), 'searches per client address per day'),
  },
  automations: {
    runsPerAutomationDay: setting('DOCENT_AUTOMATION_RUNS_PER_DAY', positiveInt.default(24), 'jobs one automation may start per UTC day; later runs are refused and recorded'),
    runsPerProjectDay: setting('DOCENT_AUTOMATION_RUNS_PER_PROJECT_DAY', positiveInt.default(100), 'jobs all of a project’s automations together may start per UTC day'),
    minIntervalMinutes: setting(
      'DOCENT_AUTOMATION_MIN_INTERVAL_MINUTES',
      positiveInt.default(5),
      'the shortest time a schedule trigger may leave between two runs; a cron that runs more often is refused with 400',
    ),
    perProject: setting('DOCENT_AUTOMATIONS_PER_PROJECT', positiveInt.default(50), 'the most automations one project may have; one more is refused with 429'),
  },
  lookupCacheMs: setting(
    'DOCENT_LOOKUP_CACHE_MS',
    z.coerce.number().int().min(0).max(60_000).default(1_000),
    'how long the gateway reuses a key, project or allowed origin it read (0 reads every time): how late a revocation made elsewhere bites',
  ),
  adminAuditDays: setting(
    'DOCENT_ADMIN_AUDIT_DAYS',
    z.coerce.number().int().min(1).max(3650).default(90),
    'how many days each operator API call stays in the audit log (GET /v2/admin/audit) before MongoDB removes it',
  ),
  assistant: {
    historyTokens: setting('DOCENT_ASSISTANT_HISTORY_TOKENS', z.coerce.number().int().min(0).max(1_000_000).default(4_000), 'estimated tokens of earlier turns the model sees, newest first'),
    relevanceFloor: setting('DOCENT_RELEVANCE_FLOOR', z.coerce.number().min(0).max(1).default(0.35), 'the cosine below which a question is not covered by the docs (no citations); `0` turns it off'),
    modelFirstChunkMs: setting(
      'DOCENT_ASSISTANT_MODEL_FIRST_CHUNK_MS',
      positiveInt.max(600_000).default(60_000),
      'an answer whose model sends no text this long after the call ends with an `unavailable` error event, freeing the key’s stream slot',
    ),
    modelChunkGapMs: setting('DOCENT_ASSISTANT_MODEL_CHUNK_GAP_MS', positiveInt.max(600_000).default(20_000), 'the same for a model that goes silent this long mid-answer'),
  },
  trustedProxies: setting(
    'DOCENT_TRUSTED_PROXY',
    commaList.refine((list) => list.every((a) => isIP(a) !== 0), 'must be a comma-separated list of IP addresses').default([]),
    'addresses of reverse proxies whose `X-Forwarded-For` is believed; unset, the socket’s address is the client',
  ),
  corsOrigins: setting('DOCENT_CORS_ORIGINS', originList.default([]), 'browser origins allowed to call the Connect API and the agent REST paths of every project'),
  playgroundDir: setting('DOCENT_PLAYGROUND_DIR', z.string().default(path.join(packageRoot(), 'dist', 'playground')), 'the built playground served at `/playground/`', {
    shownDefault: 'dist/playground',
  }),
  console: {
    signInFailures: setting(
      'DOCENT_CONSOLE_SIGN_IN_FAILURES',
      positiveInt.default(10),
      'failed console sign-ins allowed per 15 minutes from one address, and for one key prefix, before sign-ins from there are refused with 429',
    ),
  },
  ownDocsDir: setting('DOCENT_OWN_DOCS_DIR', z.string().default(path.join(packageRoot(), 'docs')), "docent's own documentation, served as pages at `/docs/` (the pages `docent.local` cites)", {
    shownDefault: 'docs',
  }),
  consoleDir: setting('DOCENT_CONSOLE_DIR', z.string().default(path.join(packageRoot(), 'console')), "the console's page (HTML, CSS, ES modules) served at `/console/`", { shownDefault: 'console' }),
  widgetDir: setting('DOCENT_WIDGET_DIR', z.string().default(path.join(packageRoot(), 'dist', 'widget')), 'the built widget served at `/widget.js` and `/widget.mjs`', { shownDefault: 'dist/widget' }),
  publicUrl: setting('DOCENT_PUBLIC_URL', z.url().optional(), 'the gateway’s address as forges reach it: each forge connection’s webhook URL starts with it', {
    shownDefault: 'DOCENT_API_URL',
  }),
  api: {
    url: setting('DOCENT_API_URL', z.url().default('http://127.0.0.1:8080'), 'where the `docent` CLI reaches a running gateway (`docent jobs watch`)'),
    key: setting('DOCENT_API_KEY', z.string().optional(), 'the admin key the CLI sends there', { secret: true }),
    requestTimeoutMs: setting(
      'DOCENT_API_REQUEST_TIMEOUT_MS',
      millis(100, 300_000),
      'how long the `docent` CLI waits for one answer of the operator API (a long sync or crawl is started, then followed by short requests, so it never needs one answer for its whole length)',
    ),
  },
  otlpEndpoint: setting('DOCENT_OTEL_EXPORTER_OTLP_ENDPOINT', z.url().optional(), 'OTLP/HTTP traces URL (e.g. `http://127.0.0.1:4318/v1/traces`); tracing is off (no SDK loaded) when unset'),
  metricsToken: setting(
    'DOCENT_METRICS_TOKEN',
    z.string().min(24, 'must be at least 24 characters').optional(),
    'bearer token of `GET /metrics` (at least 24 characters); unset, `/metrics` answers 401 to everyone',
    { secret: true, shownDefault: 'unset (`npm start`: `~/.cache/docent/metrics-token`)' },
  ),
} as const;
