import { randomBytes } from 'node:crypto';
import { loadConfig, type Config } from '../../src/config';
import { stackSettings } from './stack-settings';

/** The scrape token of every test gateway's GET /metrics (DOCENT_METRICS_TOKEN); a test may override it. */
export const testMetricsToken = 'test-metrics-token-0123456789abcdef';
export const asMetricsScraper = { authorization: `Bearer ${testMetricsToken}` };

/**
 * A config for the local stack with a database, index prefix and task queues of this test's own. It starts from no
 * environment at all: only the stack's address and credentials, then what the test sets.
 */
export function testConfig(overrides: Record<string, string> = {}): Config {
  const run = randomBytes(4).toString('hex');
  return loadConfig({
    ...stackSettings(),
    DOCENT_MONGO_DB: `docent_test_${run}`,
    DOCENT_TASK_QUEUE_PREFIX: `test-${run}-`,
    DOCENT_ES_INDEX_PREFIX: `test-${run}`,
    DOCENT_HTTP_PORT: '0',
    DOCENT_GRPC_PORT: '0',
    DOCENT_LOG_LEVEL: 'silent',
    DOCENT_METRICS_TOKEN: testMetricsToken,
    // Tests of other features use the deployment's token for every organization they make; test/e2e/forge-isolation.test.ts does not.
    DOCENT_GITHUB_SHARED_ORGS: '*',
    ...overrides,
  });
}
