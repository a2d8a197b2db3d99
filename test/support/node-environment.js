// Jest's node environment, except that typed arrays are the process's own: onnxruntime-node (the embedding model)
// hands back Float32Arrays made outside the test's realm, which the sandbox's `instanceof Float32Array` would refuse.
const { TestEnvironment } = require('jest-environment-node');

class NodeEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    for (const name of ['Float32Array', 'Float64Array', 'Int32Array', 'BigInt64Array', 'Uint16Array', 'Int8Array']) this.global[name] = globalThis[name];
  }
}

module.exports = NodeEnvironment;
