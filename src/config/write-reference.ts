// `npm run settings:reference` writes docs/configuration.md; with --check (npm run lint) it only says whether the page
// is stale, and exits 1 when it is.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { settingsReference } from './reference';

const page = path.resolve(__dirname, __dirname.includes(`${path.sep}dist${path.sep}`) ? '../../../docs/configuration.md' : '../../docs/configuration.md');
const wanted = settingsReference();
const current = (() => {
  try {
    return readFileSync(page, 'utf8');
  } catch {
    return '';
  }
})();

if (process.argv.includes('--check')) {
  if (current !== wanted) {
    console.error(`${path.relative(process.cwd(), page)} is stale: run \`npm run settings:reference\` and commit it (src/config/settings.ts changed)`);
    process.exit(1);
  }
} else if (current !== wanted) {
  writeFileSync(page, wanted);
  console.log(`wrote ${path.relative(process.cwd(), page)}`);
}
