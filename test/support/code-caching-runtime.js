// Jest's module runtime, compiling each module once per run instead of once per test file (jest.config.js: `runtime`).
//
// Each test file gets a fresh module registry, so every file compiled again the ~2,300 modules a gateway and a worker
// load. jest-runtime compiles with `vm.compileFunction` and a dynamic-import callback of its own per module, which V8's
// in-memory compilation cache never matches (docs/decisions/2026-11-24-test-suite-time.md, "Each module compiled once per run"). This
// runtime compiles the same function through `vm.Script`:
// - a module without `import(` gets Node's constant dynamic-import loader, so V8's cache serves the next file's copy;
// - every module gets the code V8 serialised after its first use, kept in memory per jest worker and on disk for the
//   run (the global setup's folder, removed by its teardown), so other workers and their replacements skip it too.
const { createHash } = require('node:crypto');
const { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const Runtime = require('jest-runtime').default;
const { mayImportDynamically } = require('./dynamic-import');
const { enabled: sharing, shareRegistries } = require('./shared-modules');

// It replaces jest-runtime's private executor.compile, which no release promises to keep: package.json pins jest, and
// another jest-runtime stops the run here instead of compiling modules some other way.
const writtenFor = '30.5.2';
const installed = require('jest-runtime/package.json').version;
if (installed !== writtenFor) throw new Error(`test/support/code-caching-runtime.js was written for jest-runtime ${writtenFor}, not ${installed}: check executor.compile, then update both`);

// Outside a full run (a file started by hand), the cache lives in this process only.
const cacheDir = process.env.DOCENT_TEST_RUN_DIR ? path.join(process.env.DOCENT_TEST_RUN_DIR, 'code-cache') : undefined;
if (cacheDir) mkdirSync(cacheDir, { recursive: true });
/** Code cache by hash of the module's compiled source (V8 itself checks only the source's length). */
const memory = new Map();
/** The last source compiled for each file, and its key. */
const lastCompiled = new Map();
const packsRead = new Set();
let packsWritten = 0;
/** The runtime of the file this jest worker runs now. */
let live;

// One pack file per test file's new entries: a file per module cost ~0.8 ms to create on this disk, 2,300 of them.
// A pack is records of a 20-byte key, a 4-byte length and V8's data.
function readNewPacks() {
  if (!cacheDir) return;
  for (const name of readdirSync(cacheDir)) {
    if (!name.endsWith('.pack') || packsRead.has(name)) continue;
    packsRead.add(name);
    const pack = readFileSync(path.join(cacheDir, name));
    for (let at = 0; at < pack.length; ) {
      const key = pack.toString('hex', at, at + 20);
      const length = pack.readUInt32LE(at + 20);
      memory.set(key, pack.subarray(at + 24, at + 24 + length));
      at += 24 + length;
    }
  }
}

function writePack(entries) {
  for (const { key, data } of entries) memory.set(key, data);
  if (!cacheDir || entries.length === 0) return;
  const parts = entries.flatMap(({ key, data }) => {
    const head = Buffer.alloc(24);
    head.write(key, 'hex');
    head.writeUInt32LE(data.length, 20);
    return [head, data];
  });
  // Written aside and renamed: another worker reads either nothing or the whole pack.
  const name = `${process.pid}-${++packsWritten}.pack`;
  try {
    writeFileSync(path.join(cacheDir, `${name}.partial`), Buffer.concat(parts));
    renameSync(path.join(cacheDir, `${name}.partial`), path.join(cacheDir, name));
    packsRead.add(name);
  } catch {
    // A cache that cannot be written (a full disk) only costs other workers the compiling; the file's result stands.
  }
}

class CodeCachingRuntime extends Runtime {
  constructor(...args) {
    super(...args);
    shareRegistries(this.registries);
    live = this;
    // A shared package keeps the `require` and `import()` of the file that first loaded it (shared-modules.js). Once
    // that file is done, its runtime refuses them ("after the Jest environment has been torn down"): they go to the
    // runtime of the file running now, which finds shared packages in the same registry.
    const runtime = this;
    const ownDynamicImport = this.esmLoader.dynamicImport;
    this.esmLoader.dynamicImport = (...a) => (runtime.isDone() ? live.esmLoader.dynamicImport(...a) : ownDynamicImport(...a));
    readNewPacks();
    /** Scripts compiled without usable cache, serialised once the file is done (by then with what its tests ran). */
    const uncached = [];
    this.uncachedScripts = uncached;
    this.executor.compile = function compile(scriptSource, filename) {
      const vmContext = this.environment.getVmContext();
      if (vmContext == null) return null;
      const scriptFilename = this.resolution.isCoreModule(filename) ? `jest-nodejs-core-${filename}` : filename;
      // The function jest-runtime makes with compileFunction, opened on the module's first line so lines stay.
      const head = `({"Object.<anonymous>":function(${this.injectedModuleParameters.join(',')}){`;
      const source = `${head}${scriptSource}\n}});`;
      // By file first: within a worker the next file compiles the same sources, and comparing them costs less than hashing.
      const known = lastCompiled.get(scriptFilename);
      const key = known?.source === source ? known.key : createHash('sha1').update(source).digest('hex');
      lastCompiled.set(scriptFilename, { source, key });
      const cachedData = memory.get(key);
      const script = new vm.Script(source, {
        filename: scriptFilename,
        columnOffset: -head.length,
        cachedData,
        importModuleDynamically: mayImportDynamically(scriptSource)
          ? (specifier, _script, importAttributes, phase) => (runtime.isDone() ? live : runtime).executor.dynamicImport(specifier, scriptFilename, vmContext, importAttributes, phase)
          : vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
      });
      if (!cachedData || script.cachedDataRejected) uncached.push({ key, script });
      return script.runInContext(vmContext)['Object.<anonymous>'];
    };
  }

  /** Torn down, with another file's runtime running in this worker. */
  isDone() {
    return sharing && this !== live && this.testState.isTornDown();
  }

  requireModuleOrMock(from, moduleName) {
    return this.isDone() ? live.requireModuleOrMock(from, moduleName) : super.requireModuleOrMock(from, moduleName);
  }

  teardown() {
    writePack(this.uncachedScripts.splice(0).map(({ key, script }) => ({ key, data: script.createCachedData() })));
    super.teardown();
  }
}

module.exports = CodeCachingRuntime;
