import { h } from '../dom.js';

/** Splits a unified diff into its files: [{ path, lines }]. */
export function diffFiles(text) {
  const files = [];
  for (const line of text.split('\n')) {
    const start = /^diff --git a\/(.*) b\/(.*)$/.exec(line);
    if (start) files.push({ path: start[2], lines: [] });
    if (files.length) files.at(-1).lines.push(line);
  }
  return files;
}

const lineClass = (l) => (l.startsWith('@@') ? 'hunk' : l.startsWith('+') && !l.startsWith('+++') ? 'add' : l.startsWith('-') && !l.startsWith('---') ? 'del' : undefined);

/** A diff shown per file, each in its own disclosure, lines marked added or removed. */
export function renderDiff(text) {
  const files = diffFiles(text);
  if (!files.length) return h('p', { class: 'muted' }, 'No change.');
  return h(
    'div',
    { class: 'diff', 'data-testid': 'diff' },
    files.map((f) =>
      h(
        'details',
        { open: true, dataset: { path: f.path } },
        h('summary', {}, f.path, ` (+${f.lines.filter((l) => lineClass(l) === 'add').length} −${f.lines.filter((l) => lineClass(l) === 'del').length})`),
        h(
          'pre',
          {},
          f.lines.map((l) => h('span', { class: lineClass(l) }, `${l}\n`)),
        ),
      ),
    ),
  );
}
