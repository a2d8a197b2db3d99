// `npm run settings:reference` writes docs/configuration.md; with --check (npm run lint) it only says whether the page
// is stale, and exits 1 when it is or when it cannot tell (a source edited after the build it runs from).
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { settingsReference } from './reference';

// Run from dist/src/config after a build (npm run lint), or from src/config.
const above = path.resolve(__dirname, '../..');
const dist = path.basename(above) === 'dist' ? above : undefined;
const page = path.join(dist ? path.dirname(dist) : above, 'docs/configuration.md');
const wanted = settingsReference();
const current = (() => {
  try {
    return readFileSync(page, 'utf8');
  } catch {
    return '';
  }
})();

/** A source of this check edited after its build (dist/): the check would read the declarations as they were before. */
function editedSinceBuild(dist: string): string | undefined {
  for (const compiled of Object.keys(require.cache).filter((f) => f.startsWith(dist + path.sep))) {
    const source = path.join(path.dirname(dist), path.relative(dist, compiled)).replace(/\.js$/, '.ts');
    if (existsSync(source) && statSync(source).mtimeMs > statSync(compiled).mtimeMs) return path.relative(process.cwd(), source);
  }
  return undefined;
}

if (process.argv.includes('--check')) {
  const edited = dist && editedSinceBuild(dist);
  if (edited) {
    console.error(`${edited} changed after the last build, so the settings reference cannot be checked: run \`npm run settings:reference\` (it builds first)`);
    process.exit(1);
  }
  if (current !== wanted) {
    console.error(`${path.relative(process.cwd(), page)} is stale: run \`npm run settings:reference\` and commit it (src/config/settings.ts changed)`);
    process.exit(1);
  }
} else if (current !== wanted) {
  writeFileSync(page, wanted);
  console.log(`wrote ${path.relative(process.cwd(), page)}`);
}
