// Jest setup file: the local stack's credentials, from the same place `npm start` takes them (`infra/stack.sh env`),
// for whatever the test environment does not set itself. Every other DOCENT_* setting of the developer's shell is
// dropped, so that a DOCENT_MODEL_PROVIDER or DOCENT_GITHUB_TOKEN never reaches a test's config or the processes it
// spawns (they inherit process.env). Only where the stack lives and what the run's global setup shares remain.
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { stackSettingNames } = require('./stack-settings');

const lines = execFileSync('bash', [path.join(__dirname, '../../infra/stack.sh'), 'env'], { encoding: 'utf8', env: process.env });
for (const line of lines.split('\n').filter(Boolean)) {
  const at = line.indexOf('=');
  const name = line.slice(0, at);
  if (!process.env[name]) process.env[name] = line.slice(at + 1);
}
for (const name of Object.keys(process.env)) {
  if (name.startsWith('DOCENT_') && !stackSettingNames.includes(name) && !name.startsWith('DOCENT_TEST_')) delete process.env[name];
}
// Made by test/support/global-setup.js for this run: workflows are bundled once, each fixture passage embedded once,
// and the run's Temporal dev server.
if (process.env.DOCENT_TEST_WORKFLOW_BUNDLE) process.env.DOCENT_WORKFLOW_BUNDLE = process.env.DOCENT_TEST_WORKFLOW_BUNDLE;
if (process.env.DOCENT_TEST_TEMPORAL_ADDRESS) process.env.DOCENT_TEMPORAL_ADDRESS = process.env.DOCENT_TEST_TEMPORAL_ADDRESS;
if (process.env.DOCENT_TEST_EMBEDDING_CACHE_DIR) process.env.DOCENT_EMBEDDING_CACHE_DIR = process.env.DOCENT_TEST_EMBEDDING_CACHE_DIR;
