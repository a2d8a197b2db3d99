// Whether a module's source may call `import(…)`: such a module keeps jest's own loader in the code-caching runtime.
// JavaScript allows whitespace and comments between `import` and `(`, so a text search for `import(` alone missed
// `import\n(` and `import/**/(`, and such a module shared module state across test files through Node's loader.
const dynamicImport = /\bimport\s*(?:(?:\/\*[\s\S]*?\*\/|\/\/[^\n]*\n)\s*)*\(/;

/** True when the source may hold a dynamic import (a false alarm only costs the compile cache for that module). */
function mayImportDynamically(source) {
  return dynamicImport.test(source);
}

module.exports = { mayImportDynamically };
