// Jest global setup: what every suite would otherwise redo. The workflows are bundled once for the whole run (each
// worker, in-process or spawned, loads the file: DOCENT_WORKFLOW_BUNDLE), and passages embedded by one suite are kept
// by text hash for the next (DOCENT_EMBEDDING_CACHE_DIR), so each docs fixture is embedded once per run.
const { mkdtempSync, writeFileSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { bundleWorkflowCode, DefaultLogger } = require('@temporalio/worker');

module.exports = async function globalSetup() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'docent-jest-run-'));
  const { code } = await bundleWorkflowCode({ workflowsPath: path.resolve(__dirname, '../../workflows/index.ts'), logger: new DefaultLogger('WARN') });
  const bundle = path.join(dir, 'workflow-bundle.js');
  writeFileSync(bundle, code);
  // Jest's workers are forked after this and inherit the variables; test/support/stack-env.js passes them on.
  process.env.DOCENT_TEST_RUN_DIR = dir;
  process.env.DOCENT_TEST_WORKFLOW_BUNDLE = bundle;
  process.env.DOCENT_TEST_EMBEDDING_CACHE_DIR = path.join(dir, 'embeddings');
};
