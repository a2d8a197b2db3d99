// `npm run settings:reference` writes docs/configuration.md; with --check (npm run lint) it only says whether the page
// is stale, and exits 1 when it is or when it cannot tell (a source edited after the build it runs from).
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { settingsReference } from './reference';

/** The checkout: the nearest folder above that holds package.json (this file runs from src/config or from a build of it). */
function checkoutRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

const root = checkoutRoot(__dirname);
// The folder this run's src/ sits in: the checkout itself, or a build (dist/settings-check from npm run lint).
const above = path.resolve(__dirname, '../..');
const build = above === root ? undefined : above;
const page = path.join(root, 'docs/configuration.md');
const wanted = settingsReference();
const current = (() => {
  try {
    return readFileSync(page, 'utf8');
  } catch {
    return '';
  }
})();

/** A source of this check edited after its build: the check would read the declarations as they were before. */
function editedSinceBuild(build: string): string | undefined {
  for (const compiled of Object.keys(require.cache).filter((f) => f.startsWith(build + path.sep))) {
    const source = path.join(root, path.relative(build, compiled)).replace(/\.js$/, '.ts');
    if (existsSync(source) && statSync(source).mtimeMs > statSync(compiled).mtimeMs) return path.relative(process.cwd(), source);
  }
  return undefined;
}

if (process.argv.includes('--check')) {
  const edited = build && editedSinceBuild(build);
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
