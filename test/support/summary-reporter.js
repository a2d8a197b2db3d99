// Ends the run with each test file's time, slowest first, and the plain "N passed, N failed" line that CI reads.
const path = require('node:path');

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const files = results.testResults.map((r) => ({ file: path.relative(process.cwd(), r.testFilePath), seconds: (r.perfStats.end - r.perfStats.start) / 1000 })).sort((a, b) => b.seconds - a.seconds);
    if (files.length > 1) {
      const lines = files.map((f) => `${f.seconds.toFixed(1).padStart(7)} s  ${f.file}`);
      process.stdout.write(`\njest: time per test file, slowest first\n${lines.join('\n')}\n`);
    }
    process.stdout.write(`\njest: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${results.numPendingTests} skipped\n`);
  }
}
module.exports = SummaryReporter;
