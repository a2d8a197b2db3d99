// Where a docs page lives: its path inside the docs and its URL on the docs site.

/** `commands/npm-ci.md` → `commands/npm-ci`; backslashes become slashes. */
export function pagePath(relativeFile: string): string {
  return relativeFile
    .replace(/\\/g, '/')
    .replace(/^\/+/, '')
    .replace(/\.(md|mdx|markdown)$/i, '');
}

/** The page URL: `index` pages are their folder's URL. */
export function pageUrl(baseUrl: string, path: string): string {
  const base = baseUrl.replace(/\/+$/, '');
  const page = path === 'index' ? '' : path.replace(/(^|\/)index$/, '$1');
  return `${base}/${page}`;
}
