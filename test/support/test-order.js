// The order jest starts test files in. Unit files go first, so their failures show within seconds. Then the files
// known to be slowest (measured on a full run, slowest first; update when the summary reporter's list changes; last
// from the clean-clone run of 2026-11-27, with the files that run took over 12 s): on a
// clean clone jest has no timings of its own, and a heavy file started last leaves one worker busy while the others
// idle. The files that start their own Elasticsearch cluster or Temporal server sit apart in the list. Last
// come the files that measure waits (rate limits, deadlines), once the CPU-heavy ones are done.
const Sequencer = require('@jest/test-sequencer').default;
const path = require('node:path');

const heavyFirst = [
  'test/e2e/sandbox-jobs.test.ts',
  'test/e2e/agent-jobs.test.ts',
  'test/e2e/temporal-down-create.test.ts',
  'test/e2e/rest-fuzz.test.ts',
  'test/integration/es-cluster.test.ts',
  'test/e2e/scale-out.test.ts',
  'test/e2e/console.test.ts',
  'test/e2e/tenant-fairness.test.ts',
  'test/integration/setup-cache.test.ts',
  'test/integration/assistant.test.ts',
  'test/e2e/model-providers.test.ts',
  'test/e2e/playground.test.ts',
  'test/e2e/automations.test.ts',
  'test/e2e/cli.test.ts',
  'test/e2e/job-transparency.test.ts',
  'test/e2e/plan-approval.test.ts',
  'test/e2e/github-triggers.test.ts',
  'test/integration/ingest-question-priority.test.ts',
  'test/e2e/job-models-diff-images.test.ts',
  'test/e2e/github-app.test.ts',
  'test/e2e/github-mentions.test.ts',
  'test/e2e/gap-loop.test.ts',
  'test/e2e/secrets-agent-code.test.ts',
  'test/e2e/context-repositories.test.ts',
  'test/e2e/limits.test.ts',
  'test/e2e/automation-templates.test.ts',
  'test/integration/docs-ingest.test.ts',
  'test/integration/github-answers.test.ts',
  'test/e2e/setup-secrets.test.ts',
  'test/e2e/widget.test.ts',
  'test/e2e/cli-secrets.test.ts',
  'test/integration/docs-sync.test.ts',
  'test/integration/temporal-tls.test.ts',
  'test/e2e/cli-automations.test.ts',
  'test/integration/sandbox.test.ts',
  'test/e2e/operator-api.test.ts',
  'test/integration/llms-withdrawn.test.ts',
  'test/e2e/self-docs.test.ts',
  'test/e2e/payload-encryption.test.ts',
  'test/integration/sandbox-egress.test.ts',
  'test/e2e/job-ledger-temporal-down.test.ts',
  'test/e2e/operator-keys.test.ts',
  'test/e2e/docs-analytics.test.ts',
  'test/integration/es-down.test.ts',
  'test/integration/gap-preview.test.ts',
  'test/e2e/processes.test.ts',
];
const timingLast = ['test/integration/edge-bounds.test.ts', 'test/integration/rate-limits.test.ts', 'test/e2e/stream-leases.test.ts'];

class TestOrder extends Sequencer {
  async sort(tests) {
    const byDefault = await super.sort(tests);
    const rank = (test) => {
      const file = path.relative(test.context.config.rootDir, test.path);
      if (test.context.config.displayName?.name === 'unit') return -1;
      const heavy = heavyFirst.indexOf(file);
      if (heavy >= 0) return heavy;
      const late = timingLast.indexOf(file);
      return late >= 0 ? heavyFirst.length + 1 + late : heavyFirst.length;
    };
    return byDefault
      .map((test, i) => ({ test, i, r: rank(test) }))
      .sort((a, b) => a.r - b.r || a.i - b.i)
      .map((x) => x.test);
  }
}

module.exports = TestOrder;
