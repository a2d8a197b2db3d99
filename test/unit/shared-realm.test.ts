// Two test files run one after the other in one jest worker, with the project's environment and runtime
// (test/support/node-environment.js, code-caching-runtime.js): what the second file sees of the first.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const support = path.resolve(__dirname, '../support');
const jestBin = path.resolve(__dirname, '../../node_modules/jest/bin/jest.js');

// Each file loads a package; the second calls the function that loads the rest of it, through the `require` of the
// file that loaded it first, and counts jest-circus's event handlers on the realm they share.
const testFile = `
const handlers = () => globalThis[Symbol.for('EVENT_HANDLERS')].length;
const lazy = require('lazy-package');
test('uses what the file before it left', () => {
  if (!globalThis.firstFile) {
    globalThis.firstFile = { handlers: handlers() };
    return;
  }
  expect(lazy.later()).toBe('loaded later');
  expect(handlers()).toBe(globalThis.firstFile.handlers);
});
`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'docent-shared-realm-'));
  const pkg = path.join(dir, 'node_modules', 'lazy-package');
  await mkdir(pkg, { recursive: true });
  await writeFile(path.join(pkg, 'index.js'), "exports.later = () => require('./later');\n");
  await writeFile(path.join(pkg, 'later.js'), "module.exports = 'loaded later';\n");
  for (const name of ['first.test.js', 'second.test.js']) await writeFile(path.join(dir, name), testFile);
  const config = { rootDir: dir, testEnvironment: path.join(support, 'node-environment.js'), runtime: path.join(support, 'code-caching-runtime.js') };
  await writeFile(path.join(dir, 'jest.config.json'), JSON.stringify(config));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('test files sharing one realm', () => {
  it("the next file can still load the rest of a package the file before loaded, and hears none of that file's handlers", async () => {
    const env = { ...process.env, DOCENT_TEST_RUN_DIR: '', DOCENT_TEST_SHARED_MODULES: '1' };
    const result = await run(process.execPath, [jestBin, '--config', 'jest.config.json', '--runInBand', '--ci'], { cwd: dir, env }).catch((err: { stderr: string }) => err);
    expect(result.stderr).toMatch(/Tests: {7}2 passed, 2 total/);
    expect(result.stderr).not.toMatch(/torn down/);
  }, 60_000);
});
