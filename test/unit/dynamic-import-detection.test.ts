import vm from 'node:vm';
// The test runtime's own rule for which modules keep jest's loader (test/support/code-caching-runtime.js).
const { mayImportDynamically } = require('../support/dynamic-import') as { mayImportDynamically: (source: string) => boolean };

/** Whether V8 itself parses the source as calling import(): compiled with a loader that records the call. */
async function callsImport(source: string): Promise<boolean> {
  let called = false;
  const script = new vm.Script(source, {
    importModuleDynamically: (async () => {
      called = true;
      return new vm.SyntheticModule([], () => undefined);
    }) as never,
  });
  await Promise.resolve(script.runInNewContext({})).catch(() => undefined);
  return called;
}

describe('the test runtime’s detection of dynamic imports', () => {
  const spellings = ["import('x')", "import ('x')", "import\n('x')", "import/**/('x')", "import /* a\nb */ ('x')", "import// why\n('x')", "import\t\n /*a*/ //b\n ('x')"];

  it.each(spellings)('sees %j, which V8 runs as a dynamic import', async (call) => {
    const source = `globalThis.p = ${call}.catch(() => undefined);`;
    expect(await callsImport(source)).toBe(true);
    expect(mayImportDynamically(source)).toBe(true);
  });

  it('leaves modules without one to the shared loader', () => {
    for (const source of ["const important = require('x');", 'export const imports = 1;', "reimport('x')", "// import is mentioned\nconst a = ('b');"]) {
      expect(mayImportDynamically(source)).toBe(false);
    }
  });
});
