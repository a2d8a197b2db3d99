import type { Config } from '../../src/config';
import { createLogger } from '../../src/log';
import { installTemporalRuntime } from '../../src/worker-build';

/**
 * The Temporal SDK's runtime for a test file's in-process workers. It is one per process and a jest worker runs many
 * files: the first file to start a worker installs it, and every later call finds it installed.
 */
export function installTestRuntime(config: Config): void {
  try {
    installTemporalRuntime(config, createLogger('silent', 'test-worker'));
  } catch {
    // installed already by another file in this jest worker
  }
}
