import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runCLI } from 'jest';
// The run's last line (test/support/summary-reporter.js), from a real jest run over files of our making.
const { summaryLine } = require('../support/summary-reporter') as { summaryLine: (results: unknown) => string };

describe('the summary line at the end of a run', () => {
  it('counts a test file that fails to load, which has no failed test', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'docent-summary-'));
    try {
      await writeFile(path.join(dir, 'fine.test.js'), "test('adds', () => expect(1 + 1).toBe(2));\n");
      await writeFile(path.join(dir, 'broken.test.js'), "require('./no-such-module');\ntest('never runs', () => {});\n");
      await writeFile(path.join(dir, 'jest.config.json'), JSON.stringify({ testMatch: ['**/*.test.js'], cache: false }));
      const { results } = await runCLI({ silent: true, reporters: [], watchman: false } as never, [dir]);
      expect(results.numFailedTests).toBe(0);
      expect(summaryLine(results)).toBe('jest: 1 passed, 0 failed, 0 skipped, 1 test files failed to load');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
