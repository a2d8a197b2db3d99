/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: '<rootDir>/test/support/node-environment.js',
  roots: ['<rootDir>/test'],
  // The local stack's credentials (infra/stack.sh env), as `npm start` gives them to the gateway and worker.
  setupFiles: ['<rootDir>/test/support/stack-env.js'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2023' }, module: { type: 'commonjs' } }],
  },
  // Integration and e2e suites talk to the real stack; a generous per-test deadline, never a sleep.
  testTimeout: 120_000,
  maxWorkers: 2,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
};
