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
for (const name of ['WORKFLOW_BUNDLE', 'TEMPORAL_ADDRESS', 'EMBEDDING_CACHE_DIR']) {
  const shared = process.env[`DOCENT_TEST_${name}`];
  if (shared) process.env[`DOCENT_${name}`] = shared;
}
