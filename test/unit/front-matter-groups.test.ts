import { readFrontMatter, UNREADABLE_GROUPS } from '../../src/docs/front-matter';
import { visibleGroups } from '../../src/search/visibility';

// `groups:` decides who sees a page: whatever cannot be read as a list of names restricts the page to nobody.
const groupsOf = (yaml: string) => readFrontMatter(yaml).groups;
const nobody = [UNREADABLE_GROUPS];

describe('front matter groups', () => {
  it('reads a list or a comma-separated string, in lower case', () => {
    expect(groupsOf('groups: [staff, Beta]')).toEqual(['staff', 'beta']);
    expect(groupsOf('groups: Staff, beta')).toEqual(['staff', 'beta']);
    expect(groupsOf('groups:\n  - STAFF\n')).toEqual(['staff']);
  });

  it('a capitalised key restricts the page like the lower-case one', () => {
    expect(groupsOf('Groups: [staff]')).toEqual(['staff']);
    expect(groupsOf('GROUPS: staff')).toEqual(['staff']);
  });

  it('a map, nothing, an empty list, an empty name or a nested list restricts the page to nobody', () => {
    for (const yaml of ['groups:\n  staff: true\n', 'groups:', 'groups: ""', 'groups: []', 'groups: [staff, ""]', 'groups: [[staff]]', 'groups: [{name: staff}]']) {
      expect([yaml, groupsOf(yaml)]).toEqual([yaml, nobody]);
    }
  });

  it('no key can see a page restricted to nobody, and key groups compare case-insensitively', () => {
    expect(visibleGroups(['Staff'], undefined)).toEqual(['staff']);
    expect(visibleGroups(['Staff', 'beta'], ['STAFF'])).toEqual(['staff']);
    expect(visibleGroups(['staff'], undefined)).not.toContain(UNREADABLE_GROUPS);
  });

  it('a page without groups stays public', () => {
    expect(groupsOf('title: Install')).toBeUndefined();
  });
});
