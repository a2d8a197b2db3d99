import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Client as EsClient } from '@elastic/elasticsearch';
import { runDocsIngest } from '../../src/cli/docs-ingest';
import { docsAlias } from '../../src/search/docs-index';
import { createEsClient } from '../../src/search/es-client';
import { testConfig } from '../support/config';
import { deleteTestIndexes, miniDocsFolder, startWorker, type RunningWorker } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';
import { sseChunks, v2Body } from '../support/http';

// A 3-node Elasticsearch cluster from infra/stack.sh (DOCENT_ES_NODES=3) on ports of its own, beside the shared
// single node. One node is stopped: search and the assistant keep answering, and a re-ingest still swaps its alias.

const run = promisify(execFile);
const port = Number(process.env.DOCENT_TEST_ES_CLUSTER_PORT ?? 9250);
// The C1 compiler only: three JVMs started for one test spent 45 s of CPU getting healthy with both compilers, 24 s
// with C1 (and 15 s of wall instead of 27), and this cluster never runs long enough to gain from C2. The same for
// the launcher JVM each node keeps as its parent (CLI_JAVA_OPTS, read by Elasticsearch's own start script): 2 s less.
// Nor does this cluster verify the bytecode of Elasticsearch's own jars, the distribution infra/stack.sh installed:
// 31.7-33.8 s of CPU to healthy with verification, 27.1-27.9 s without. The stack's own node keeps it.
const jvm = '-XX:TieredStopAtLevel=1 -XX:+UnlockDiagnosticVMOptions -XX:-BytecodeVerificationRemote';
const clusterEnv = {
  ...process.env,
  DOCENT_ES_NODES: '3',
  DOCENT_ES_PORT: String(port),
  DOCENT_ES_HEAP: '512m',
  DOCENT_ES_JAVA_OPTS: jvm,
  CLI_JAVA_OPTS: jvm,
  DOCENT_RUN_DIR: path.join(os.tmpdir(), `docent-es-cluster-${port}`),
};
const stack = (...args: string[]) => run('bash', [path.resolve(__dirname, '../../infra/stack.sh'), ...args], { env: clusterEnv });
const nodes = [0, 1, 2].map((i) => `http://127.0.0.1:${port + i}`);
const domain = 'kiln.cluster.test';
let config: ReturnType<typeof testConfig>;

let es: EsClient;
let gw: RunningGateway;
let worker: RunningWorker;
let key: string;
let docs: string;

beforeAll(async () => {
  await stack('start', 'elasticsearch');
  // The cluster's own credentials, as `infra/stack.sh env` gives them for its ports.
  const clusterSettings = Object.fromEntries(
    (await stack('env')).stdout
      .split('\n')
      .filter((l) => l.startsWith('DOCENT_ES_'))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  config = testConfig({ ...clusterSettings, DOCENT_ES_URL: nodes.join(','), DOCENT_ES_REPLICAS: '1' });
  es = createEsClient(config.elasticsearch, { maxRetries: 2, requestTimeout: 30_000 });
  docs = await mkdtemp(path.join(os.tmpdir(), 'docent-cluster-docs-'));
  await cp(miniDocsFolder, docs, { recursive: true });
  worker = await startWorker(config);
  await runDocsIngest(config, { domain, source: docs, baseUrl: 'https://kiln.example' }, () => undefined);
  gw = await startGateway({
    ...clusterSettings,
    DOCENT_MONGO_DB: config.mongo.db,
    DOCENT_ES_INDEX_PREFIX: config.elasticsearch.indexPrefix,
    DOCENT_ES_URL: nodes.join(','),
    DOCENT_MODEL_PROVIDER: '',
  });
  key = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain })).key;
}, 240_000);

afterAll(async () => {
  // Each step runs whatever failed before it (a cluster that never started leaves most of them undefined), and the
  // nodes are stopped in any case: a node left running keeps the next run's cluster from starting.
  const steps: Array<() => Promise<unknown> | undefined> = [
    () => worker?.stop(),
    () => gw?.stop(),
    () => (config ? deleteTestIndexes(config).catch(() => undefined) : undefined),
    () => es?.close(),
    () => (docs ? rm(docs, { recursive: true, force: true }) : undefined),
  ];
  let failure: unknown;
  for (const step of steps)
    await Promise.resolve()
      .then(step)
      .catch((err: unknown) => (failure ??= err));
  await stack('stop', 'elasticsearch');
  if (failure) throw failure;
}, 120_000);

const search = (query: string) =>
  fetch(`${gw.url}/discovery/v1/search/${domain}/results`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
const servedIndex = async () => Object.keys(await es.indices.getAlias({ name: docsAlias(config.elasticsearch.indexPrefix, domain) }))[0]!;

describe('a 3-node Elasticsearch cluster losing one node', () => {
  it('keeps answering searches and the assistant, and a re-ingest still swaps the alias', async () => {
    const first = await servedIndex();
    const [shards] = [(await es.cat.shards({ index: first, format: 'json' })) as Array<{ prirep: string; node: string; state: string }>];
    // One primary and one replica, on two different nodes.
    expect(shards.map((s) => s.state)).toEqual(['STARTED', 'STARTED']);
    expect(new Set(shards.map((s) => s.node)).size).toBe(2);

    // Stop the node that holds the primary: the worst one to lose.
    const primaryNode = shards.find((s) => s.prirep === 'p')!.node;
    await stack('stop-node', primaryNode.replace('node-', ''));

    const found = await search('quickstart');
    expect(found.status).toBe(200);
    expect(((await found.json()) as { results: unknown[] }).results.length).toBeGreaterThan(0);

    const answer = await fetch(`${gw.url}/discovery/v2/assistant/${domain}/message`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(v2Body('How do I start with Kiln?')),
    });
    expect(answer.status).toBe(200);
    const chunks = sseChunks(await answer.text());
    expect(chunks.some((c) => c.type === 'source-url')).toBe(true);
    expect(chunks.at(-1)).toBe('[DONE]');
    expect(chunks.at(-2)).toMatchObject({ type: 'finish' });

    // New content on two nodes: a new index with its replica, and the alias moves to it.
    await writeFile(path.join(docs, 'guides', 'glazing.md'), '# Glazing\n\nKiln glazes every page with a marmoset theme.\n');
    const progress = await runDocsIngest(config, { domain, source: docs, baseUrl: 'https://kiln.example' }, () => undefined);
    expect(progress.phase).toBe('done');
    const second = await servedIndex();
    expect(second).not.toBe(first);
    const glazing = (await (await search('marmoset theme')).json()) as { results: Array<{ path: string }> };
    expect(glazing.results[0]?.path).toBe('guides/glazing');
  });
});
