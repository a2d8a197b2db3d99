// The test runtime's rule for what two test files of one jest worker share (test/support/shared-modules.js).
const { shareRegistries } = require('../support/shared-modules') as { shareRegistries: (r: Record<string, Map<string, unknown>>) => void };

/** Two files' registries, as jest-runtime makes them for each test file. */
function twoFiles() {
  const files = [0, 1].map(() => ({ moduleRegistry: new Map<string, unknown>(), esModuleRegistry: new Map<string, unknown>() }));
  for (const f of files) shareRegistries(f);
  return files as [(typeof files)[0], (typeof files)[0]];
}

describe('modules shared between the test files of a jest worker', () => {
  it('a package loaded by one file is the same object for the next, and outlives the first file', () => {
    const [first, second] = twoFiles();
    const zod = { exports: {} };
    first.moduleRegistry.set('/repo/node_modules/zod/index.js', zod);
    first.moduleRegistry.clear();
    expect(second.moduleRegistry.get('/repo/node_modules/zod/index.js')).toBe(zod);
    const esm = { status: 'evaluated' };
    second.esModuleRegistry.set('file:///repo/node_modules/ai/dist/index.mjs', esm);
    expect(first.esModuleRegistry.has('file:///repo/node_modules/ai/dist/index.mjs')).toBe(true);
  });

  it("docent's own modules stay each file's own, and go with its teardown", () => {
    const [first, second] = twoFiles();
    first.moduleRegistry.set('/repo/src/assistant/service.ts', { exports: {} });
    first.esModuleRegistry.set('file:///repo/test/support/http.ts', {});
    expect(second.moduleRegistry.has('/repo/src/assistant/service.ts')).toBe(false);
    expect(second.esModuleRegistry.has('file:///repo/test/support/http.ts')).toBe(false);
    first.moduleRegistry.clear();
    expect(first.moduleRegistry.has('/repo/src/assistant/service.ts')).toBe(false);
  });

  it('a package that failed to load is removed for every file, so the next one loads it again', () => {
    const [first, second] = twoFiles();
    first.moduleRegistry.set('/repo/node_modules/broken/index.js', {});
    first.moduleRegistry.delete('/repo/node_modules/broken/index.js');
    expect(second.moduleRegistry.has('/repo/node_modules/broken/index.js')).toBe(false);
  });
});
