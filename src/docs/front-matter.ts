// A page's YAML front matter as strings and string lists, the only shapes the index stores.
import { parse } from 'yaml';

export type FrontMatter = Record<string, string | string[]>;

/** A page whose front matter cannot be read: indexing it without its `groups` could publish a restricted page. */
export class InvalidFrontMatterError extends Error {
  override name = 'InvalidFrontMatterError';
}

/** A group no key can hold (key groups have no control characters): a page whose `groups` cannot be read is seen by nobody. */
export const UNREADABLE_GROUPS = '\u0000unreadable-groups';

/**
 * `groups` as a list of lower-case names (compared case-insensitively); anything else it could be (a map, nothing, an
 * empty name, a nested list) restricts the page to nobody rather than publishing it.
 */
function readGroups(v: unknown): string[] {
  const items: unknown[] | null = typeof v === 'string' ? v.split(',') : Array.isArray(v) ? v : null;
  const names = (items ?? []).map((item) => (typeof item === 'string' ? item.trim().toLowerCase() : ''));
  if (names.length === 0 || names.includes('')) return [UNREADABLE_GROUPS];
  return [...new Set(names)];
}

/** Reads the YAML between the `---` lines. Scalars stay as written (`version: 2.0` is "2.0"); nested maps are ignored. */
export function readFrontMatter(yaml: string, page = 'page'): FrontMatter {
  let value: unknown;
  try {
    // The failsafe schema keeps every scalar a string, so `2.0`, `true` and dates are not reinterpreted.
    value = parse(yaml, { schema: 'failsafe', uniqueKeys: false });
  } catch (err) {
    throw new InvalidFrontMatterError(`${page}: front matter is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  const data: FrontMatter = {};
  for (const [key, v] of Object.entries(value)) {
    // `Groups:` or `GROUPS:` restricts a page as much as `groups:` does.
    if (key.trim().toLowerCase() === 'groups') data.groups = [...new Set([...((data.groups as string[] | undefined) ?? []), ...readGroups(v)])];
    else if (typeof v === 'string') data[key] = v.trim();
    else if (Array.isArray(v)) data[key] = v.filter((item): item is string => typeof item === 'string').map((item) => item.trim());
  }
  return data;
}
