import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { ConfigError, loadConfig } from '../../src/config';
import { deploymentIdentity } from '../../src/config/deployment';
import { settingsReference } from '../../src/config/reference';

describe('loadConfig', () => {
  it('gives the documented defaults when nothing is set', () => {
    const c = loadConfig({});
    expect(c.httpPort).toBe(8080);
    expect(c.grpcPort).toBe(8081);
    expect(c.mongo.url).toBe('mongodb://127.0.0.1:27017');
    expect(c.elasticsearch.nodes).toEqual(['http://127.0.0.1:9200']);
    expect(c.temporal.address).toBe('127.0.0.1:7233');
    expect(c.model.provider).toBeUndefined();
  });

  it('names every bad setting in one error', () => {
    expect(() => loadConfig({ DOCENT_HTTP_PORT: 'eighty', DOCENT_MONGO_URL: 'postgres://x' })).toThrow(ConfigError);
    try {
      loadConfig({ DOCENT_HTTP_PORT: 'eighty', DOCENT_MONGO_URL: 'postgres://x' });
    } catch (err) {
      expect((err as Error).message).toContain('DOCENT_HTTP_PORT');
      expect((err as Error).message).toContain('DOCENT_MONGO_URL');
    }
  });

  it('treats empty values as unset, as docker compose passes them', () => {
    expect(loadConfig({ DOCENT_MODEL_PROVIDER: '', DOCENT_GRPC_PORT: '' }).grpcPort).toBe(8081);
  });

  it('leaves GitHub webhooks off without a secret, refuses a short one without echoing it, and checks the handle', () => {
    expect(loadConfig({ DOCENT_GITHUB_WEBHOOK_SECRET: '' }).githubWebhooks).toEqual({ secret: undefined, mention: 'docent' });
    expect(loadConfig({ DOCENT_GITHUB_WEBHOOK_SECRET: 'a-long-enough-secret', DOCENT_GITHUB_MENTION: 'acme-bot' }).githubWebhooks).toEqual({ secret: 'a-long-enough-secret', mention: 'acme-bot' });
    expect(() => loadConfig({ DOCENT_GITHUB_WEBHOOK_SECRET: 'short-secret' })).toThrow(/DOCENT_GITHUB_WEBHOOK_SECRET/);
    expect(() => loadConfig({ DOCENT_GITHUB_WEBHOOK_SECRET: 'short-secret' })).not.toThrow(/short-secret/);
    expect(() => loadConfig({ DOCENT_GITHUB_MENTION: '@docent' })).toThrow(/DOCENT_GITHUB_MENTION/);
  });

  it('gives the published rate limits by default and reads overrides', () => {
    // Per client IP well below the per-key month, for messages and searches alike.
    expect(loadConfig({}).limits).toEqual({
      jobsPerProjectHour: 100,
      assistantPerKeyMonth: 10_000,
      assistantPerOrgHour: 10_000,
      assistantPerIpDay: 1_000,
      searchPerKeyMonth: 10_000,
      searchPerOrgHour: 10_000,
      searchPerIpDay: 1_000,
    });
    expect(loadConfig({}).trustedProxies).toEqual([]);
    const c = loadConfig({ DOCENT_LIMIT_JOBS_PER_HOUR: '5', DOCENT_TRUSTED_PROXY: '10.0.0.1, ::1' });
    expect(c.limits.jobsPerProjectHour).toBe(5);
    expect(c.trustedProxies).toEqual(['10.0.0.1', '::1']);
    expect(() => loadConfig({ DOCENT_TRUSTED_PROXY: 'proxy.local' })).toThrow(/DOCENT_TRUSTED_PROXY/);
    expect(() => loadConfig({ DOCENT_LIMIT_ASSISTANT_PER_IP_DAY: '0' })).toThrow(/DOCENT_LIMIT_ASSISTANT_PER_IP_DAY/);
  });

  it('bounds lookup staleness and the history the model sees, with documented defaults', () => {
    expect(loadConfig({}).lookupCacheMs).toBe(1_000);
    expect(loadConfig({ DOCENT_LOOKUP_CACHE_MS: '0' }).lookupCacheMs).toBe(0);
    expect(() => loadConfig({ DOCENT_LOOKUP_CACHE_MS: '600000' })).toThrow(/DOCENT_LOOKUP_CACHE_MS/);
    expect(loadConfig({}).assistant.historyTokens).toBe(4_000);
    expect(() => loadConfig({ DOCENT_ASSISTANT_HISTORY_TOKENS: '-1' })).toThrow(/DOCENT_ASSISTANT_HISTORY_TOKENS/);
  });

  it('finds the embedding model where infra/stack.sh installs it, or nowhere when embeddings are off', () => {
    expect(loadConfig({ DOCENT_CACHE: '/var/cache/x' }).embeddingModelDir).toBe('/var/cache/x/models/all-minilm-l6-v2-q');
    expect(loadConfig({ DOCENT_CACHE: '/var/cache/x', DOCENT_EMBEDDING_MODEL_DIR: '/models/minilm' }).embeddingModelDir).toBe('/models/minilm');
    expect(loadConfig({ DOCENT_EMBEDDINGS: 'off' }).embeddingModelDir).toBeUndefined();
    expect(() => loadConfig({ DOCENT_EMBEDDINGS: 'maybe' })).toThrow(/DOCENT_EMBEDDINGS/);
  });

  it('gives the sandbox its limits in bytes, an unprivileged user, and no private networks by default', () => {
    const c = loadConfig({});
    expect(c.sandbox).toEqual({
      bwrapPath: 'bwrap',
      limits: {
        timeoutMs: 600_000,
        memoryBytes: 4096 * 2 ** 20,
        maxProcesses: 512,
        maxFileBytes: 1024 * 2 ** 20,
        maxDiskBytes: 4096 * 2 ** 20,
        tmpBytes: 512 * 2 ** 20,
        shmBytes: 64 * 2 ** 20,
        maxInodes: 200_000,
      },
      runAs: { uid: 61000, gid: 61000 },
      readOnlyPaths: [],
      egressAllow: [],
      cgroup: 'auto',
    });
    expect(loadConfig({ DOCENT_SANDBOX_CPUS: '1.5' }).sandbox?.limits.cpus).toBe(1.5);
    expect(c.agent.repairRounds).toBe(2);
    expect(c.allowPrivateNetworks).toEqual([]);
    expect(loadConfig({ DOCENT_SANDBOX: 'off' }).sandbox).toBeUndefined();
    expect(loadConfig({ DOCENT_ALLOW_PRIVATE_NETWORKS: '10.0.0.0/8, fd00::/8' }).allowPrivateNetworks).toEqual(['10.0.0.0/8', 'fd00::/8']);
    for (const [name, value] of [
      ['DOCENT_ALLOW_PRIVATE_NETWORKS', '10.0.0.0'],
      ['DOCENT_ALLOW_PRIVATE_NETWORKS', '10.0.0.0/33'],
      ['DOCENT_ALLOW_PRIVATE_NETWORKS', '::ffff:10.0.0.0/95'],
      ['DOCENT_SANDBOX_USER', '0:0'],
      ['DOCENT_SANDBOX_READ_ONLY_PATHS', 'opt/node'],
      ['DOCENT_SANDBOX', 'docker'],
      ['DOCENT_AGENT_REPAIR_ROUNDS', '-1'],
      ['DOCENT_SANDBOX_CGROUP', 'sometimes'],
      ['DOCENT_SANDBOX_CPUS', '0'],
    ]) {
      expect(() => loadConfig({ [name!]: value })).toThrow(name);
    }
  });

  it('signs in to Elasticsearch with a user and password or an API key, never both, and with nothing by default', () => {
    expect(loadConfig({}).elasticsearch.auth).toBeUndefined();
    expect(loadConfig({ DOCENT_ES_USERNAME: 'docent', DOCENT_ES_PASSWORD: 'pw' }).elasticsearch.auth).toEqual({ username: 'docent', password: 'pw' });
    expect(loadConfig({ DOCENT_ES_API_KEY: 'aWQ6a2V5' }).elasticsearch.auth).toEqual({ apiKey: 'aWQ6a2V5' });
    expect(() => loadConfig({ DOCENT_ES_USERNAME: 'docent' })).toThrow(/DOCENT_ES_USERNAME and DOCENT_ES_PASSWORD go together/);
    expect(() => loadConfig({ DOCENT_ES_API_KEY: 'aWQ6a2V5', DOCENT_ES_USERNAME: 'docent', DOCENT_ES_PASSWORD: 'pw' })).toThrow(/not both/);
  });

  it('keeps /metrics closed and clear payloads refused unless the operator says otherwise', () => {
    expect(loadConfig({}).metricsToken).toBeUndefined();
    expect(() => loadConfig({ DOCENT_METRICS_TOKEN: 'short' })).toThrow(/DOCENT_METRICS_TOKEN/);
    expect(loadConfig({}).temporal.allowPlaintextPayloads).toBe(false);
    expect(loadConfig({ DOCENT_PAYLOAD_ALLOW_PLAINTEXT: '1' }).temporal.allowPlaintextPayloads).toBe(true);
    expect(() => loadConfig({ DOCENT_PAYLOAD_ALLOW_PLAINTEXT: 'yes' })).toThrow(/DOCENT_PAYLOAD_ALLOW_PLAINTEXT/);
  });

  it('gives each deployment its own workspace folder by default, named without its credentials', () => {
    const one = loadConfig({ DOCENT_MONGO_URL: 'mongodb://docent:hunter2@db.internal:27017/?authSource=admin' });
    const staging = loadConfig({ DOCENT_MONGO_URL: 'mongodb://docent:hunter2@db.internal:27017', DOCENT_MONGO_DB: 'docent_staging' });
    const test = loadConfig({ DOCENT_MONGO_URL: 'mongodb://docent:hunter2@db.internal:27017', DOCENT_TASK_QUEUE_PREFIX: 'test-' });
    const dirs = [one, staging, test].map((c) => c.agent.workspaceDir);
    expect(new Set(dirs).size).toBe(3);
    for (const dir of dirs) expect(path.dirname(dir)).toBe(os.tmpdir());
    expect(loadConfig({ DOCENT_MONGO_URL: 'mongodb://other:pw@db.internal:27017' }).agent.workspaceDir).toBe(one.agent.workspaceDir);
    expect(deploymentIdentity(one)).toBe('mongo=db.internal:27017/docent temporal=default/');
    expect(loadConfig({ DOCENT_WORKSPACE_DIR: '/srv/clones' }).agent.workspaceDir).toBe('/srv/clones');
  });

  it('rejects a model provider it does not know', () => {
    expect(() => loadConfig({ DOCENT_MODEL_PROVIDER: 'skynet' })).toThrow(/DOCENT_MODEL_PROVIDER/);
  });

  describe('GitHub App', () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();

    it('takes the App id with its key inline (line breaks written as \\n too) or from a file, and never prints the key', async () => {
      const inline = loadConfig({ DOCENT_GITHUB_APP_ID: '12345', DOCENT_GITHUB_APP_PRIVATE_KEY: pem.replace(/\n/g, '\\n') });
      expect(inline.github.app?.id).toBe('12345');
      expect(inline.github.app?.privateKey.reveal()).toBe(pem);
      const dir = await mkdtemp(path.join(os.tmpdir(), 'docent-config-'));
      await writeFile(path.join(dir, 'app.pem'), pem);
      const fromFile = loadConfig({ DOCENT_GITHUB_APP_ID: '12345', DOCENT_GITHUB_APP_PRIVATE_KEY_FILE: path.join(dir, 'app.pem') });
      expect(fromFile.github.app?.privateKey.reveal()).toBe(pem);
      await rm(dir, { recursive: true, force: true });
      const printed = [JSON.stringify(inline), inspect(inline, { depth: 10 }), String(inline.github.app?.privateKey)].join('\n');
      expect(printed).not.toContain('PRIVATE KEY');
      expect(printed).toContain('[redacted]');
    });

    it('refuses half an App, both key forms, and a key that is not an RSA private key, without quoting it', () => {
      expect(() => loadConfig({ DOCENT_GITHUB_APP_ID: '12345' })).toThrow(/DOCENT_GITHUB_APP_ID and DOCENT_GITHUB_APP_PRIVATE_KEY \(or _FILE\) go together/);
      expect(() => loadConfig({ DOCENT_GITHUB_APP_PRIVATE_KEY: pem })).toThrow(/go together/);
      expect(() => loadConfig({ DOCENT_GITHUB_APP_ID: '1', DOCENT_GITHUB_APP_PRIVATE_KEY: pem, DOCENT_GITHUB_APP_PRIVATE_KEY_FILE: '/x' })).toThrow(/not both/);
      expect(() => loadConfig({ DOCENT_GITHUB_APP_ID: 'docent', DOCENT_GITHUB_APP_PRIVATE_KEY: pem })).toThrow(/DOCENT_GITHUB_APP_ID: must be the App ID/);
      expect(() => loadConfig({ DOCENT_GITHUB_APP_ID: '1', DOCENT_GITHUB_APP_PRIVATE_KEY_FILE: '/nonexistent/app.pem' })).toThrow(/cannot read the file/);
      const bad = '-----BEGIN RSA PRIVATE KEY-----\nnot-a-key-secretish\n-----END RSA PRIVATE KEY-----\n';
      expect(() => loadConfig({ DOCENT_GITHUB_APP_ID: '1', DOCENT_GITHUB_APP_PRIVATE_KEY: bad })).toThrow(/not an RSA private key in PEM form/);
      try {
        loadConfig({ DOCENT_GITHUB_APP_ID: '1', DOCENT_GITHUB_APP_PRIVATE_KEY: bad });
      } catch (err) {
        expect((err as Error).message).not.toContain('secretish');
      }
    });
  });
});

describe('the model catalog', () => {
  const legacy = { DOCENT_MODEL_PROVIDER: 'openai', DOCENT_MODEL: 'gpt-4.1', DOCENT_MODEL_API_KEY: 'sk-x' };

  it('is the single DOCENT_MODEL when DOCENT_MODELS is unset, priced from DOCENT_MODEL_PRICES', () => {
    const c = loadConfig({ ...legacy, DOCENT_MODEL_PRICES: '{"gpt-4.1":{"input":2,"output":8},"gpt-old":{"input":1,"output":1}}' });
    expect(c.models).toEqual([{ name: 'gpt-4.1', provider: 'openai', apiKey: 'sk-x', prices: { input: 2, output: 8 }, images: false }]);
    expect(c.model).toEqual({ provider: 'openai', id: 'gpt-4.1', baseUrl: undefined, apiKey: 'sk-x' });
    // Jobs of earlier models keep their price.
    expect(c.agent.prices['gpt-old']).toEqual({ input: 1, output: 1 });
    expect(loadConfig({ ...legacy, DOCENT_MODEL_IMAGES: 'on' }).models[0]!.images).toBe(true);
    expect(loadConfig({}).models).toEqual([]);
  });

  it('reads DOCENT_MODELS, the first the default, with the shared endpoint and key as defaults', () => {
    const c = loadConfig({
      DOCENT_MODEL_BASE_URL: 'http://127.0.0.1:11434/v1',
      DOCENT_MODEL_API_KEY: 'shared',
      DOCENT_MODEL_PRICES: '{"claude-x":{"input":9,"output":9}}',
      DOCENT_MODELS: JSON.stringify([
        { name: 'local-llm', provider: 'openai-compatible' },
        { name: 'claude-x', provider: 'anthropic', apiKey: 'sk-ant', baseUrl: 'https://api.anthropic.com/v1', prices: { input: 3, output: 15 }, images: true },
      ]),
    });
    expect(c.models.map((m) => [m.name, m.provider, m.baseUrl, m.apiKey, m.images])).toEqual([
      ['local-llm', 'openai-compatible', 'http://127.0.0.1:11434/v1', 'shared', false],
      ['claude-x', 'anthropic', 'https://api.anthropic.com/v1', 'sk-ant', true],
    ]);
    expect(c.model).toMatchObject({ provider: 'openai-compatible', id: 'local-llm' });
    expect(c.agent.prices['claude-x']).toEqual({ input: 3, output: 15 });
  });

  it('refuses a malformed catalog, naming the setting', () => {
    expect(() => loadConfig({ DOCENT_MODELS: 'gpt-4.1' })).toThrow(/DOCENT_MODELS: must be JSON/);
    expect(() => loadConfig({ DOCENT_MODELS: '[]' })).toThrow(/DOCENT_MODELS/);
    expect(() => loadConfig({ DOCENT_MODELS: '[{"name":"a","provider":"openai"},{"name":"a","provider":"anthropic"}]' })).toThrow(/each model once/);
    expect(() => loadConfig({ DOCENT_MODELS: '[{"name":"a","provider":"gemini"}]' })).toThrow(/DOCENT_MODELS/);
    expect(() => loadConfig({ DOCENT_MODELS: '[{"name":"a","provider":"openai-compatible"}]' })).toThrow(/needs a baseUrl/);
    expect(() => loadConfig({ ...legacy, DOCENT_MODELS: '[{"name":"a","provider":"openai"}]' })).toThrow(/not both/);
  });
});

describe('the settings reference', () => {
  // Read from the sources, not dist/: an edit to a setting without `npm run settings:reference` fails here at once.
  it('docs/configuration.md is the page generated from the declarations in src/config/settings.ts', async () => {
    expect(await readFile(path.resolve(__dirname, '../../docs/configuration.md'), 'utf8')).toBe(settingsReference());
  });
});
