// Jest setup file: every DOCENT_* setting of the developer's shell is dropped, so that a DOCENT_MODEL_PROVIDER or
// DOCENT_GITHUB_TOKEN never reaches a test's config or the processes it spawns (they inherit process.env). Only where
// the stack lives and how to sign in to it (put there once per run by test/support/global-setup.js, from
// `infra/stack.sh env` as `npm start` takes it) and what the run's global setup shares remain.
const { stackSettingNames } = require('./stack-settings');

for (const name of Object.keys(process.env)) {
  if (name.startsWith('DOCENT_') && !stackSettingNames.includes(name) && !name.startsWith('DOCENT_TEST_')) delete process.env[name];
}
// Made by test/support/global-setup.js for this run: workflows are bundled once, each fixture passage embedded once,
// and the run's Temporal dev server.
if (process.env.DOCENT_TEST_WORKFLOW_BUNDLE) process.env.DOCENT_WORKFLOW_BUNDLE = process.env.DOCENT_TEST_WORKFLOW_BUNDLE;
if (process.env.DOCENT_TEST_TEMPORAL_ADDRESS) process.env.DOCENT_TEMPORAL_ADDRESS = process.env.DOCENT_TEST_TEMPORAL_ADDRESS;
if (process.env.DOCENT_TEST_EMBEDDING_CACHE_DIR) process.env.DOCENT_EMBEDDING_CACHE_DIR = process.env.DOCENT_TEST_EMBEDDING_CACHE_DIR;
