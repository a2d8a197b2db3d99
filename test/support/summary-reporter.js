// Ends the run with each test file's time and CPU, slowest first, and the plain "N passed, N failed" line that CI
// reads. The suite keeps both cores busy, so CPU is what makes the run long (docs/decisions/2026-11-24-test-suite-time.md).
const { existsSync, readFileSync } = require('node:fs');
const path = require('node:path');

/** file → CPU seconds, as test/support/node-environment.js recorded them in the run's folder. */
function cpuByFile() {
  const file = process.env.DOCENT_TEST_RUN_DIR && path.join(process.env.DOCENT_TEST_RUN_DIR, 'file-cpu.jsonl');
  const cpu = new Map();
  if (!file || !existsSync(file)) return cpu;
  for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const { file: testPath, own, children } = JSON.parse(line);
    cpu.set(testPath, { own, children });
  }
  return cpu;
}

/**
 * The run's last line. A test file that fails to load (an import that throws) has no failed test, so it is counted
 * apart: a run with six such files once printed "117 passed, 0 failed".
 */
function summaryLine(results) {
  const unloaded = results.numRuntimeErrorTestSuites;
  return `jest: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${results.numPendingTests} skipped${unloaded ? `, ${unloaded} test files failed to load` : ''}`;
}

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const cpu = cpuByFile();
    const files = results.testResults
      .map((r) => ({ file: path.relative(process.cwd(), r.testFilePath), seconds: (r.perfStats.end - r.perfStats.start) / 1000, cpu: cpu.get(r.testFilePath) }))
      .sort((a, b) => b.seconds - a.seconds);
    if (files.length > 1) {
      const column = (s) => (s === undefined ? '' : `${s.toFixed(1)} s`).padStart(8);
      const lines = files.map((f) => `${f.seconds.toFixed(1).padStart(7)} s ${column(f.cpu?.own)} ${column(f.cpu?.children)}  ${f.file}`);
      const sum = (key) => files.reduce((total, f) => total + (f.cpu?.[key] ?? 0), 0);
      process.stdout.write(`\njest: time per test file, slowest first; CPU of the jest worker, and of the processes it started\n${lines.join('\n')}\n`);
      if (cpu.size) process.stdout.write(`jest: CPU in test files ${sum('own').toFixed(0)} s, in the processes they started ${sum('children').toFixed(0)} s\n`);
    }
    process.stdout.write(`\n${summaryLine(results)}\n`);
  }
}
module.exports = SummaryReporter;
module.exports.summaryLine = summaryLine;
