import type { estypes } from '@elastic/elasticsearch';

/**
 * The groups whose restricted pages a request may see: the key's groups, narrowed to those the request's
 * `filter.groups` names when it names any. A filter can never add a group the key does not have. Names compare
 * case-insensitively: pages store them in lower case (src/docs/front-matter.ts).
 */
export function visibleGroups(keyGroups: readonly string[] | undefined, requested: readonly string[] | undefined): string[] {
  const allowed = [...new Set((keyGroups ?? []).map((g) => g.toLowerCase()))];
  if (!requested?.length) return allowed;
  const asked = new Set(requested.map((g) => g.toLowerCase()));
  return allowed.filter((g) => asked.has(g));
}

/** Public pages (no front matter `groups`) and the pages that list one of `groups`; public pages alone when none. */
export function visibilityFilter(groups: readonly string[]): estypes.QueryDslQueryContainer {
  const publicPages: estypes.QueryDslQueryContainer = { bool: { must_not: { exists: { field: 'groups' } } } };
  if (groups.length === 0) return publicPages;
  return { bool: { should: [publicPages, { terms: { groups: [...groups] } }], minimum_should_match: 1 } };
}
