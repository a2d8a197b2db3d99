import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { assertFreshBuild } from '../support/process';

describe('processes the tests spawn from dist/', () => {
  it('are refused when a source changed after the build, and missing builds say how to make one', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'docent-stale-'));
    try {
      await mkdir(path.join(root, 'src/rest'), { recursive: true });
      await mkdir(path.join(root, 'dist/src'), { recursive: true });
      const source = path.join(root, 'src/rest/router.ts');
      const built = path.join(root, 'dist/src/main.js');
      await writeFile(source, 'export {};\n');
      await writeFile(built, '');
      await utimes(source, new Date(1_000_000), new Date(1_000_000));
      expect(() => assertFreshBuild(built, root)).not.toThrow();

      const other = path.join(root, 'dist/src/worker.js');
      await writeFile(other, '');
      await utimes(other, new Date(500_000), new Date(500_000));
      expect(() => assertFreshBuild(other, root)).toThrow(/worker\.js is older than the sources: run `npm run build`/);
      expect(() => assertFreshBuild(path.join(root, 'dist/src/gone.js'), root)).toThrow(/gone\.js is missing: run `npm run build`/);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
