// docs/configuration.md, generated from the declarations: the reference can never disagree with the loader.
import { listSettings, type Setting } from './declare';
import { declared } from './settings';

function shownDefault(s: Setting): string {
  if (s.shownDefault !== undefined) return s.shownDefault;
  const parsed = s.schema.safeParse(undefined);
  const value = parsed.success ? parsed.data : undefined;
  if (value === undefined) return 'unset';
  if (value === '' || (Array.isArray(value) && value.length === 0)) return 'empty';
  if (Array.isArray(value)) return `\`${value.join(',')}\``;
  return `\`${typeof value === 'object' ? JSON.stringify(value) : String(value)}\``;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The page's whole text. */
export function settingsReference(): string {
  const rows = listSettings(declared).map(({ setting: s }) => `| \`${s.name}\`${s.secret ? ' (secret)' : ''} | ${cell(shownDefault(s))} | ${cell(s.doc)} |`);
  return [
    '# Configuration',
    '',
    '<!-- Generated from src/config/settings.ts by `npm run settings:reference`; `npm run lint` fails when it is stale. -->',
    '',
    'Every setting is an environment variable, read once at start-up; a bad one stops start-up with its name, and an',
    'empty value counts as unset (Docker Compose passes unset variables as empty). A setting marked secret is a credential: docent never',
    'prints, logs or echoes it in an error.',
    '',
    '| setting | default | what it does |',
    '|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}
