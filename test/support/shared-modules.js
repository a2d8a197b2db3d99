// Packages evaluated once per jest worker instead of once per test file (prototype; see jest.config.js).
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

function shareRegistries(registries) {
  if (!enabled) return;
  registries.moduleRegistry = new SplitRegistry(shared.cjs);
  registries.esModuleRegistry = new SplitRegistry(shared.esm);
}

module.exports = { enabled, shareRegistries };
