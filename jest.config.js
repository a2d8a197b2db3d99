const os = require('node:os');

// The transform and environment every project shares.
const shared = {
  rootDir: __dirname,
  testEnvironment: '<rootDir>/test/support/node-environment.js',
  // Keeps only the stack's settings (test/support/global-setup.js reads `infra/stack.sh env` once) out of the DOCENT_* environment.
  setupFiles: ['<rootDir>/test/support/stack-env.js'],
  // jest-runtime, compiling each module once per run instead of once per test file (the file says how).
  runtime: '<rootDir>/test/support/code-caching-runtime.js',
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2023' }, module: { type: 'commonjs' } }],
  },
};

/** @type {import('jest').Config} */
module.exports = {
  // `jest --selectProjects unit` answers in seconds; integration needs the stack, e2e also dist/ (npm run build).
  projects: ['unit', 'integration', 'e2e'].map((name) => ({ ...shared, displayName: name, roots: [`<rootDir>/test/${name}`], testMatch: ['**/*.test.ts'] })),
  globalSetup: '<rootDir>/test/support/global-setup.js',
  globalTeardown: '<rootDir>/test/support/global-teardown.js',
  testSequencer: '<rootDir>/test/support/test-order.js',
  // Integration and e2e suites talk to the real stack; a generous per-test deadline, never a sleep.
  testTimeout: 120_000,
  // Two files per core: most of a file's time is spent waiting on Temporal, git, child processes and timeouts it
  // provokes, so two workers on 2 cores left the CPU a third idle (jest 448 s); four kept it busy (335 s).
  maxWorkers: Math.min(8, 2 * os.availableParallelism()),
  // Each test file leaves ~40 MB in its worker's heap (its module registry); by the twentieth file a worker held over
  // 1 GB, and every garbage collection and every process it spawned (each fork copies its page tables) cost more.
  // A worker past 800 MB after a file is replaced by a fresh one: on a warm stack jest 268-272 s -> 233 s (user CPU
  // 288 s -> 236 s); on clean clones with a cold stack 268 s -> 261-266 s (docs/decisions/2026-11-24-test-suite-time.md).
  workerIdleMemoryLimit: '800MB',
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
};
