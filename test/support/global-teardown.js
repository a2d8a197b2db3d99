// Removes what test/support/global-setup.js made for this run.
const { rmSync } = require('node:fs');

module.exports = async function globalTeardown() {
  await globalThis.docentTestTemporal?.close();
  if (process.env.DOCENT_TEST_RUN_DIR) rmSync(process.env.DOCENT_TEST_RUN_DIR, { recursive: true, force: true });
};
