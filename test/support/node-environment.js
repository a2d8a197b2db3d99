// Jest's node environment, except that:
// - typed arrays are the process's own: onnxruntime-node (the embedding model) hands back Float32Arrays made outside
//   the test's realm, which the sandbox's `instanceof Float32Array` would refuse;
// - each test file's CPU is recorded for test/support/summary-reporter.js: the jest worker's own, and that of the
//   processes it started and reaped meanwhile (gateways, workers, `docent` commands, git, sandboxed checks);
// - every file of a jest worker runs in one realm, where the packages they share were evaluated (shared-modules.js);
// - with DOCENT_TEST_SLOW_MS set, every hook and test that took longer is printed with its time and CPU, to find a
//   file's waits and its costly steps (a process's CPU counts in the step that reaped it: a worker's in `afterAll`).
const { appendFileSync, readFileSync } = require('node:fs');
const path = require('node:path');
const { TestEnvironment } = require('jest-environment-node');
const sharedModules = require('./shared-modules');

let sharedRealm;
// jest-circus keeps its event handlers on the realm's global (`retain`), and each file adds five (its adapter's, its
// environment's, its reporters', its unhandled-rejection handler): left in a shared realm, they hear every later file.
const EVENT_HANDLERS = Symbol.for('EVENT_HANDLERS');

/** CPU seconds of this process and of its reaped children so far, from /proc (utime+stime, cutime+cstime). */
function cpuSeconds() {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  const ticks = (i, j) => (Number(fields[i]) + Number(fields[j])) / 100;
  return { own: ticks(11, 12), children: ticks(13, 14) };
}

/**
 * Drops the functions of a finished file's hooks and tests. jest-circus runs each of them inside an AsyncLocalStorage
 * store that holds the hook or test; a socket or timer made meanwhile in a shared package (fetch's connection pool, a
 * driver's pool) keeps that store, and through the function's closure the file's whole module graph, past the file.
 * In a realm shared by every file of a worker that kept each file's graph alive: the heap grew about 15 MB a file
 * (docs/decisions/2026-11-27-jest-worker-memory.md).
 */
function releaseFileClosures(block) {
  for (const hook of block.hooks ?? []) Object.assign(hook, { fn: undefined, asyncError: undefined });
  for (const child of block.children ?? []) {
    if (child.type === 'describeBlock') releaseFileClosures(child);
    else Object.assign(child, { fn: undefined, asyncError: undefined });
  }
}

class NodeEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
    this.cpuAtStart = cpuSeconds();
    for (const name of ['Float32Array', 'Float64Array', 'Int32Array', 'BigInt64Array', 'Uint16Array', 'Int8Array']) this.global[name] = globalThis[name];
    if (!sharedModules.enabled) return;
    // Every file of this worker runs in the first file's realm, where the shared packages were evaluated.
    if (!sharedRealm) sharedRealm = { context: this.context, global: this.global, moduleMocker: this.moduleMocker, fakeTimers: this.fakeTimers, fakeTimersModern: this.fakeTimersModern };
    Object.assign(this, sharedRealm);
  }

  async setup() {
    await super.setup();
    // The handlers before this file's: circus makes its own two when the realm has none yet.
    this.handlersBefore = this.global[EVENT_HANDLERS]?.length ?? 2;
  }

  handleTestEvent(event, state) {
    if (event.name === 'teardown') this.circusState = state;
    const slowMs = Number(process.env.DOCENT_TEST_SLOW_MS);
    if (!slowMs) return;
    const step = event.hook ?? event.test;
    if (event.name === 'hook_start' || event.name === 'test_fn_start') {
      this.stepStart = Date.now();
      this.stepCpu = cpuSeconds();
    }
    if (!/^(hook|test_fn)_(success|failure)$/.test(event.name) || !step) return;
    const ms = Date.now() - this.stepStart;
    const cpu = cpuSeconds();
    const cpuText = `${(cpu.own - this.stepCpu.own).toFixed(2)} s CPU, ${(cpu.children - this.stepCpu.children).toFixed(2)} s in reaped processes`;
    const name = event.hook ? `${event.hook.type}${event.hook.parent?.name ? ` (${event.hook.parent.name})` : ''}` : event.test.name;
    if (ms >= slowMs) process.stderr.write(`[slow] ${(ms / 1000).toFixed(1)} s (${cpuText}) ${path.basename(this.testPath)}: ${name}\n`);
  }

  async teardown() {
    // The shared realm outlives the file: only a realm of its own is torn down.
    if (!sharedModules.enabled) await super.teardown();
    else {
      if (this.circusState) releaseFileClosures(this.circusState.rootDescribeBlock);
      this.global[EVENT_HANDLERS]?.splice(this.handlersBefore);
    }
    const runDir = process.env.DOCENT_TEST_RUN_DIR;
    if (!runDir) return;
    const now = cpuSeconds();
    const line = { file: this.testPath, own: now.own - this.cpuAtStart.own, children: now.children - this.cpuAtStart.children };
    appendFileSync(path.join(runDir, 'file-cpu.jsonl'), `${JSON.stringify(line)}\n`);
  }
}

module.exports = NodeEnvironment;
