import { chunkPage, pagePath, parseFrontMatter, slugify } from '../../src/docs/chunk';
import { buildRetrievalQuery, normalizeCurrentPath } from '../../src/search/docs-index';
import { stemText } from '../../src/search/analyze';

const page = `---
title: "Deploying"
description: How to ship a site
version: "2.x"
groups: [staff, beta]
---
import Tabs from '@theme/Tabs';

# Deploying

Intro text with a [link](https://x.example) and **bold**.

## Configure the target

Set \`target\` in <Code>site.toml</Code>.

\`\`\`toml
# not a heading
target = "prod"
\`\`\`

### Options

One.

## Configure the target

Again.
`;

describe('chunkPage', () => {
  const chunks = chunkPage('guides/deploying.mdx', page, { baseUrl: 'https://docs.example.com/' });

  it('splits by heading with trail, anchors (deduplicated) and URL', () => {
    expect(chunks.map((c) => [c.id, c.headings, c.url])).toEqual([
      ['guides/deploying#deploying', [], 'https://docs.example.com/guides/deploying#deploying'],
      ['guides/deploying#configure-the-target', ['Configure the target'], 'https://docs.example.com/guides/deploying#configure-the-target'],
      ['guides/deploying#options', ['Configure the target', 'Options'], 'https://docs.example.com/guides/deploying#options'],
      ['guides/deploying#configure-the-target-1', ['Configure the target'], 'https://docs.example.com/guides/deploying#configure-the-target-1'],
    ]);
  });

  it('keeps front matter fields, cleans MDX and inline Markdown, keeps code', () => {
    expect(chunks[0]).toMatchObject({ title: 'Deploying', path: 'guides/deploying', description: 'How to ship a site', version: '2.x', groups: ['staff', 'beta'] });
    expect(chunks[0]!.text).toBe('Intro text with a link and bold.');
    expect(chunks[1]!.text).toContain('Set target in site.toml.');
    expect(chunks[1]!.text).toContain('# not a heading');
    expect(chunks.map((c) => c.text).join('\n')).not.toContain('import Tabs');
  });

  it('splits a long section into pieces with the same anchor', () => {
    const long = `# T\n\n## Big\n\n${Array.from({ length: 40 }, (_, i) => `Paragraph ${i} ${'word '.repeat(20)}`).join('\n\n')}`;
    const pieces = chunkPage('big.md', long, { baseUrl: 'https://d', maxChunkChars: 500 });
    expect(pieces.length).toBeGreaterThan(3);
    expect(new Set(pieces.map((p) => p.anchor))).toEqual(new Set(['big']));
    expect(new Set(pieces.map((p) => p.id)).size).toBe(pieces.length);
  });
});

describe('helpers', () => {
  it('parses front matter block lists', () => {
    expect(parseFrontMatter('---\ntitle: A\ngroups:\n  - x\n  - y\n---\nbody').data).toEqual({ title: 'A', groups: ['x', 'y'] });
  });
  it('names pages without extension and slugs like GitHub', () => {
    expect(pagePath('commands/npm-ci.md')).toBe('commands/npm-ci');
    expect(slugify('`npm ci` & friends!')).toBe('npm-ci--friends');
  });
  it('stems both documents and queries the same way', () => {
    expect(stemText('Installing packages')).toBe(stemText('install package'));
  });
  it('reads currentPath as a path, a file name or a URL', () => {
    expect(normalizeCurrentPath('/commands/npm-ci.md#options')).toEqual({ path: 'commands/npm-ci', anchor: 'options' });
    expect(normalizeCurrentPath('https://docs.example.com/using-npm/scripts/')).toEqual({ path: 'using-npm/scripts', anchor: undefined });
  });
  it('turns filters into Elasticsearch filters', () => {
    const q = buildRetrievalQuery({ domain: 'd', query: 'x', pageSize: 5, filter: { version: '2', pathPrefix: '/commands/' } });
    expect(JSON.stringify(q)).toContain('{"term":{"version":"2"}}');
    expect(JSON.stringify(q)).toContain('{"prefix":{"path":"commands/"}}');
  });
});
