// The one typed configuration, parsed once at start-up from the settings declared in src/config/settings.ts. Its
// type is what loadConfig builds: a setting that maps to one value is declared once and needs nothing here.
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { catalogPrices, type CatalogModel } from '../llm/model-catalog';
import type { SandboxLimits } from '../sandbox';
import { ConfigError, readSettings, type Values } from './declare';
import { type DeploymentSettings, deploymentTag } from './deployment';
import { declared } from './settings';

export { ConfigError } from './declare';

type Settings = Values<typeof declared>;

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

/** How docent signs in to Elasticsearch with security on. */
export type EsAuth = { username: string; password: string } | { apiKey: string };

function elasticsearch({ username, password, apiKey, ...rest }: Settings['elasticsearch']) {
  if (!username !== !password) throw new ConfigError('invalid configuration: DOCENT_ES_USERNAME and DOCENT_ES_PASSWORD go together');
  if (apiKey && username) throw new ConfigError('invalid configuration: give Elasticsearch either DOCENT_ES_API_KEY or DOCENT_ES_USERNAME and DOCENT_ES_PASSWORD, not both');
  const auth: EsAuth | undefined = apiKey ? { apiKey } : username ? { username, password: password! } : undefined;
  return { ...rest, auth };
}

function temporal({ tlsMode, tlsCert, tlsKey, tlsCa, tlsServerName, ...rest }: Settings['temporal']) {
  if (!tlsCert !== !tlsKey) throw new ConfigError('invalid configuration: DOCENT_TEMPORAL_TLS_CERT and DOCENT_TEMPORAL_TLS_KEY go together (mTLS)');
  if (rest.codecToken && !rest.payloadKeys) throw new ConfigError('invalid configuration: DOCENT_CODEC_TOKEN needs DOCENT_PAYLOAD_KEYS (the codec endpoint decodes with them)');
  const tlsAsked = tlsMode === 'on' || (tlsMode !== 'off' && Boolean(tlsCert || tlsCa || tlsServerName || rest.apiKey));
  const tls = tlsAsked
    ? {
        ...(tlsCa && { serverRootCACertificate: tlsCa }),
        ...(tlsCert && tlsKey && { clientCertPair: { crt: tlsCert, key: tlsKey } }),
        ...(tlsServerName && { serverNameOverride: tlsServerName }),
      }
    : undefined;
  return { ...rest, tls };
}

/** GitHub (or Enterprise): its REST API, where `owner/name` repositories are cloned from, and the token or App for both. */
export interface GitHubSettings {
  apiUrl: string;
  gitUrl: string;
  token?: string;
  /** When set, jobs use installation tokens of this App instead of `token` (src/github/credentials.ts). */
  app?: { id: string; privateKey: HiddenText };
  /** The organizations (names or `*`-patterns) that may use the deployment's token or App (src/forges/deployment-forge.ts). */
  sharedOrgs: string[];
}

function gitHub(github: Settings['github']): GitHubSettings {
  return { apiUrl: github.apiUrl, gitUrl: github.gitUrl, token: github.token, app: githubApp(github), sharedOrgs: github.sharedOrgs };
}

/** The App's id and private key (inline PEM or a file), checked to be an RSA private key now rather than at the first job. */
function githubApp({ appId, appPrivateKey: inline, appPrivateKeyFile: file }: Settings['github']): GitHubSettings['app'] {
  if (!appId && !inline && !file) return undefined;
  if (inline && file) throw new ConfigError('invalid configuration: give DOCENT_GITHUB_APP_PRIVATE_KEY or DOCENT_GITHUB_APP_PRIVATE_KEY_FILE, not both');
  if (!appId || (!inline && !file)) throw new ConfigError('invalid configuration: DOCENT_GITHUB_APP_ID and DOCENT_GITHUB_APP_PRIVATE_KEY (or _FILE) go together');
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
  return { id: appId, privateKey: new HiddenText(pemText) };
}

/**
 * The catalog: DOCENT_MODELS with DOCENT_MODEL_BASE_URL and DOCENT_MODEL_API_KEY as every entry's defaults, or else the
 * one model of DOCENT_MODEL_PROVIDER and DOCENT_MODEL, priced from DOCENT_MODEL_PRICES; empty when neither is complete.
 */
function modelCatalog(m: Settings['model']): CatalogModel[] {
  if (m.catalog && (m.id || m.provider)) throw new ConfigError('invalid configuration: give DOCENT_MODELS or DOCENT_MODEL_PROVIDER and DOCENT_MODEL, not both');
  const shared = { ...(m.baseUrl && { baseUrl: m.baseUrl }), ...(m.apiKey && { apiKey: m.apiKey }) };
  if (m.catalog) {
    const models = m.catalog.map((entry) => ({ ...shared, ...entry }));
    const unreachable = models.find((entry) => entry.provider === 'openai-compatible' && !entry.baseUrl);
    if (unreachable) throw new ConfigError(`invalid configuration: DOCENT_MODELS: ${unreachable.name} is openai-compatible and needs a baseUrl (or DOCENT_MODEL_BASE_URL)`);
    return models;
  }
  if (!m.provider || !m.id) return [];
  const price = m.prices[m.id];
  return [{ name: m.id, provider: m.provider, ...shared, ...(price && { prices: price }), images: m.images === 'on' }];
}

/** The default model (the catalog's first), as the assistant and model-less checks use it. */
function defaultModel(m: Settings['model'], models: CatalogModel[]): { provider?: CatalogModel['provider']; id?: string; baseUrl?: string; apiKey?: string } {
  const first = m.catalog ? models[0] : undefined;
  if (!first) return { provider: m.provider, id: m.id, baseUrl: m.baseUrl, apiKey: m.apiKey };
  return { provider: first.provider, id: first.name, baseUrl: first.baseUrl, apiKey: first.apiKey };
}

function agent({ setupCache, setupCacheDir, setupCacheMaxBytes, workspaceDir: given, ...rest }: Settings['agent'], model: Settings['model'], models: CatalogModel[], deployment: DeploymentSettings) {
  // Per deployment by default: a test or staging stack on the same host never shares its clones' folder.
  const workspaceDir = given ?? path.join(os.tmpdir(), `docent-workspaces-${deploymentTag(deployment)}`);
  const cache = setupCache === 'on' ? { setupCache: { dir: setupCacheDir ?? path.join(workspaceDir, '.setup-cache'), maxBytes: setupCacheMaxBytes } } : {};
  return { ...rest, workspaceDir, ...cache, prices: catalogPrices(models, model.prices) };
}

const mib = (n: number) => n * 1024 * 1024;

/** Where repository code runs (docs/security.md); undefined when DOCENT_SANDBOX=off. */
function sandbox({ mode, bwrapPath, egressAllow, cgroup, runAs, readOnlyPaths, cpus, ...l }: Settings['sandbox']) {
  if (mode === 'off') return undefined;
  const limits: SandboxLimits = {
    timeoutMs: l.timeoutMs,
    memoryBytes: mib(l.memoryMb),
    maxProcesses: l.maxProcesses,
    maxFileBytes: mib(l.maxFileMb),
    maxDiskBytes: mib(l.maxDiskMb),
    tmpBytes: mib(l.tmpMb),
    shmBytes: mib(l.shmMb),
    maxInodes: l.maxInodes,
    ...(cpus !== undefined ? { cpus } : {}),
  };
  return { bwrapPath, limits, runAs, readOnlyPaths, egressAllow, cgroup };
}

/** Parses the settings once at start-up; empty values count as unset (docker compose passes `${X:-}`). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env) {
  const s = readSettings(declared, env);
  const models = modelCatalog(s.model);
  const { embeddings, cacheDir, embeddingModelDir, model, github, ...rest } = s;
  return {
    ...rest,
    elasticsearch: elasticsearch(s.elasticsearch),
    embeddingModelDir: embeddings === 'off' ? undefined : (embeddingModelDir ?? path.join(cacheDir, 'models', 'all-minilm-l6-v2-q')),
    temporal: temporal(s.temporal),
    model: defaultModel(model, models),
    models,
    github: gitHub(github),
    agent: agent(s.agent, model, models, s),
    sandbox: sandbox(s.sandbox),
  };
}

export type Config = ReturnType<typeof loadConfig>;
export type TemporalConfig = Config['temporal'];
export type SandboxConfig = NonNullable<Config['sandbox']>;
/** The worker's cache of setup results (DOCENT_SETUP_CACHE_*); absent when DOCENT_SETUP_CACHE=off. */
export type SetupCacheConfig = NonNullable<Config['agent']['setupCache']>;
export type ReadConcernLevel = NonNullable<Config['mongo']['readConcern']>;
