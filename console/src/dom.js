/** Builds DOM nodes from data: text is always text (never parsed as HTML), so nothing an API returns can run. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
    else if (name === 'dataset') Object.assign(el.dataset, value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  fill(el, children, false);
  return el;
}

const absent = (c) => c === undefined || c === null || c === false;

/** Puts `children` in `el` (replacing what is there unless `replace` is false), leaving out absent ones (`cond && node`). */
export function fill(el, children, replace = true) {
  const nodes = [children]
    .flat(Number.POSITIVE_INFINITY)
    .filter((c) => !absent(c))
    .map((c) => (c instanceof Node ? c : String(c)));
  if (replace) el.replaceChildren(...nodes);
  else el.append(...nodes);
  return el;
}

/**
 * A table with a header row; `cells` maps each item to its row's cells. It scrolls inside a box of its own (a focusable
 * region, so a keyboard can scroll it), so a narrow screen scrolls the table, not the page.
 */
export function table(headers, items, cells, attrs = {}) {
  const grid = h(
    'table',
    attrs,
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        headers.map((t) => h('th', { scope: 'col' }, t)),
      ),
    ),
    h(
      'tbody',
      {},
      items.map((item) =>
        h(
          'tr',
          {},
          cells(item).map((c) => h('td', {}, c)),
        ),
      ),
    ),
  );
  // Not named after its columns: a field's label search ("Kind") would find the table's box too.
  const name = attrs['aria-label'] ?? 'Scrollable table';
  return h('div', { class: 'table-scroll', role: 'region', 'aria-label': name, tabindex: 0 }, grid);
}

/** A labelled input; the label wraps it, so every field has an accessible name. */
export function field(label, attrs = {}) {
  const tag = attrs.multiline ? 'textarea' : 'input';
  const { multiline: _, ...rest } = attrs;
  return h('label', {}, h('span', {}, label), h(tag, { type: tag === 'input' ? 'text' : undefined, ...rest }));
}

export function select(label, name, options, value) {
  return h(
    'label',
    {},
    h('span', {}, label),
    h(
      'select',
      { name },
      options.map(([v, text]) => h('option', { value: v, selected: v === value }, text)),
    ),
  );
}

export const when = (iso) => (iso ? new Date(iso).toLocaleString() : '—');

/** Replaces the page's content and moves focus there, so a screen reader hears the new page. */
export function show(...children) {
  const main = document.getElementById('main');
  return fill(main, children);
}

let toastTimer;
export function toast(text) {
  const el = document.getElementById('toast');
  el.textContent = text;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    el.textContent = '';
  }, 4000);
}

/** Values of a form's named fields. */
export const formValues = (form) => Object.fromEntries(new FormData(form));
/** Lines of a textarea, without empty ones. */
export const lines = (text) =>
  String(text ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
