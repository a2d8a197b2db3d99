// Packages under node_modules evaluated once per jest worker instead of once per test file; docent's own modules stay
// per file. The realm is shared too (node-environment.js), so a shared package's objects are the test's own kind
// (docs/decisions/2026-11-27-shared-modules.md). DOCENT_TEST_SHARED_MODULES=0 turns it off.
const shared = { cjs: new Map(), esm: new Map() };
const enabled = process.env.DOCENT_TEST_SHARED_MODULES !== '0';
const isShared = (key) => typeof key === 'string' && key.includes('/node_modules/');

/** A registry whose node_modules entries live in one map for the whole worker; clear() drops only the file's own. */
class SplitRegistry extends Map {
  constructor(sharedMap) {
    super();
    this.shared = sharedMap;
  }
  get(key) {
    return isShared(key) ? this.shared.get(key) : super.get(key);
  }
  has(key) {
    return isShared(key) ? this.shared.has(key) : super.has(key);
  }
  set(key, value) {
    if (isShared(key)) this.shared.set(key, value);
    else super.set(key, value);
    return this;
  }
  delete(key) {
    return isShared(key) ? this.shared.delete(key) : super.delete(key);
  }
}

/** Routes a jest-runtime ModuleRegistries' CommonJS and ES registries through the worker's shared maps. */
function shareRegistries(registries) {
  if (!enabled) return;
  registries.moduleRegistry = new SplitRegistry(shared.cjs);
  registries.esModuleRegistry = new SplitRegistry(shared.esm);
}

module.exports = { enabled, shareRegistries };
