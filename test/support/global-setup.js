// Jest global setup: what every suite would otherwise redo. The workflows are bundled once for the whole run (each
// worker, in-process or spawned, loads the file: DOCENT_WORKFLOW_BUNDLE), and embedded texts are kept by text hash
// (DOCENT_EMBEDDING_CACHE_DIR) in the machine's cache, so a docs fixture is embedded once per version of the embedder.
// The run's workflows go to a Temporal dev server of its own, in memory (DOCENT_TEMPORAL_ADDRESS): the stack's
// Temporal, which `npm start` keeps on disk, never fills with test jobs (docs/decisions/2026-11-24-test-suite-time.md).
const { execFileSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { bundleWorkflowCode, DefaultLogger } = require('@temporalio/worker');
// TypeScript: Jest transforms what its global setup requires.
const { startTemporalDevServer } = require('./temporal-server');

module.exports = async function globalSetup(globalConfig) {
  stackCredentials();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'docent-jest-run-'));
  // `--selectProjects unit` needs no stack at all.
  const unitOnly = globalConfig.selectProjects?.length === 1 && globalConfig.selectProjects[0] === 'unit';
  // Started beside the bundling; kept where test/support/global-teardown.js (same process) stops it.
  const temporal = unitOnly ? undefined : startTemporalDevServer({ inMemory: true }).then((server) => (globalThis.docentTestTemporal = server));
  const bundle = await workflowBundle();
  // Jest's workers are forked after this and inherit the variables; test/support/stack-env.js passes them on.
  process.env.DOCENT_TEST_RUN_DIR = dir;
  process.env.DOCENT_TEST_WORKFLOW_BUNDLE = bundle;
  process.env.DOCENT_TEST_EMBEDDING_CACHE_DIR = embeddingCache();
  if (temporal) process.env.DOCENT_TEST_TEMPORAL_ADDRESS = (await temporal).address;
};

// The local stack's address and credentials, from the same place `npm start` takes them, for whatever the developer's
// environment does not set itself; once per run (test/support/stack-env.js keeps them in each worker).
function stackCredentials() {
  const lines = execFileSync('bash', [path.join(__dirname, '../../infra/stack.sh'), 'env'], { encoding: 'utf8', env: process.env });
  for (const line of lines.split('\n').filter(Boolean)) {
    const at = line.indexOf('=');
    const name = line.slice(0, at);
    if (!process.env[name]) process.env[name] = line.slice(at + 1);
  }
}

// A folder of the machine's cache (DOCENT_CACHE, outside the checkout like the stack's binaries), made if missing.
function machineCache(name) {
  const folder = path.join(process.env.DOCENT_CACHE || path.join(os.homedir(), '.cache/docent'), name);
  mkdirSync(folder, { recursive: true });
  return folder;
}

// Entries of `folder` other than `keep` go once unused for a day: not at once, as a run of another checkout may be
// using one.
function dropOthersUnusedForADay(folder, keep) {
  for (const name of readdirSync(folder)) {
    const entry = path.join(folder, name);
    if (entry !== keep && Date.now() - statSync(entry).mtimeMs > 86_400_000) rmSync(entry, { recursive: true, force: true });
  }
}

// The workflow bundle, kept in the machine's cache under a hash of every source it may take in and of the installed
// packages: bundling cost the run's start about 2.7 s of CPU before any test file could begin.
async function workflowBundle() {
  const root = path.resolve(__dirname, '../..');
  const hash = createHash('sha256');
  for (const top of ['workflows', 'src', 'activities']) {
    const files = readdirSync(path.join(root, top), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && /\.[cm]?[jt]s$/.test(e.name))
      .map((e) => path.join(e.parentPath, e.name))
      .sort();
    for (const file of files) hash.update(path.relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  for (const file of ['package-lock.json', 'tsconfig.json', __filename]) hash.update(readFileSync(path.resolve(root, file)));
  const cache = machineCache('test-workflow-bundles');
  const bundle = path.join(cache, `${hash.digest('hex').slice(0, 16)}.js`);
  try {
    // Touched: a bundle in use is never the one a day old.
    utimesSync(bundle, new Date(), new Date());
    return bundle;
  } catch {
    // Not there yet: made below.
  }
  const { code } = await bundleWorkflowCode({ workflowsPath: path.join(root, 'workflows/index.ts'), logger: new DefaultLogger('WARN') });
  // Written whole under a name of its own, then renamed: a run beside this one never reads half a bundle.
  const partial = `${bundle}.${process.pid}`;
  writeFileSync(partial, code);
  renameSync(partial, bundle);
  dropOthersUnusedForADay(cache, bundle);
  return bundle;
}

// In the machine's cache under a hash of the embedder's code: a change to tokenizing or pooling starts an empty cache,
// and the model's own id is a folder below (src/search/embedder.ts). test/integration/embeddings.test.ts loads the
// model without it, so the model itself runs in every run.
function embeddingCache() {
  const root = machineCache('test-embeddings');
  const version = createHash('sha256')
    .update(readFileSync(path.resolve(__dirname, '../../src/search/embedder.ts')))
    .digest('hex')
    .slice(0, 16);
  const folder = path.join(root, version);
  dropOthersUnusedForADay(root, folder);
  return folder;
}
