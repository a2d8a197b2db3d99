import { chunkPage, InvalidFrontMatterError } from '../../src/docs/chunk';

const chunk = (file: string, source: string) => chunkPage(file, source, { baseUrl: 'https://docs.example.com' });
const texts = (file: string, source: string) =>
  chunk(file, source)
    .map((c) => c.text)
    .join('\n\n');

describe('headings', () => {
  it('reads setext headings like ATX ones', () => {
    const chunks = chunk('guide.md', 'Getting started\n===============\n\nIntro.\n\nInstall\n-------\n\nRun it.\n');
    expect(chunks.map((c) => [c.title, c.headings, c.anchor, c.text])).toEqual([
      ['Getting started', [], 'getting-started', 'Intro.'],
      ['Getting started', ['Install'], 'install', 'Run it.'],
    ]);
  });

  it.each(['guide.md', 'guide.mdx'])('uses a {#custom-id} as the anchor and leaves it out of the heading (%s)', (file) => {
    const chunks = chunk(file, '# Guide\n\n## Configure the target {#target}\n\nSet it.\n\nOptions {#opts}\n-------\n\nSome.\n');
    expect(chunks.map((c) => [c.headings, c.anchor, c.url])).toEqual([
      [['Configure the target'], 'target', 'https://docs.example.com/guide#target'],
      [['Options'], 'opts', 'https://docs.example.com/guide#opts'],
    ]);
  });

  it('keeps a {#custom-id} written inside MDX code as written', () => {
    // The import and the comment would show if the page had been read as plain Markdown.
    const [c] = chunk('ids.mdx', "import X from 'x';\n\n## Ids {#ids}\n\n{/* c */}\nWrite `## Title {#my-id}`:\n\n```md\n### Hello {#hello}\n```\n");
    expect(c).toMatchObject({ anchor: 'ids', text: 'Write ## Title {#my-id}:\n\n### Hello {#hello}' });
  });

  it('gives repeated headings -1, -2 like GitHub, and slugs the rendered heading text', () => {
    const chunks = chunk('cli.md', '## Example\n\na\n\n## Example\n\nb\n\n## Example\n\nc\n\n#### [`npm run <user defined>`](/commands/npm-run)\n\nd\n');
    expect(chunks.map((c) => c.anchor)).toEqual(['example', 'example-1', 'example-2', 'npm-run-user-defined']);
    expect(chunks[3]!.headings).toEqual(['Example', 'npm run <user defined>']);
  });

  it('does not read a # line inside a fenced code block as a heading, and keeps the code', () => {
    const chunks = chunk('sh.md', '## Setup\n\n```sh\n# install it\nnpm ci\n```\n\n~~~\n## not a heading either\n~~~\n');
    expect(chunks).toHaveLength(1);
    expect(chunks[0]!.text).toBe('# install it\nnpm ci\n\n## not a heading either');
  });
});

describe('front matter', () => {
  it('reads folded and literal block values', () => {
    const [c] = chunk('a.md', '---\ntitle: A\ndescription: >-\n  Ships the site\n  to production.\nversion: |\n  2.x\n---\nText.\n');
    expect(c).toMatchObject({ title: 'A', description: 'Ships the site to production.', version: '2.x' });
  });

  it.each([
    ['a flow list', 'groups: [staff, "beta testers"]'],
    ['a block list', 'groups:\n  - staff\n  - "beta testers"'],
  ])('reads groups as %s', (_, yaml) => {
    expect(chunk('a.md', `---\n${yaml}\n---\nText.\n`)[0]!.groups).toEqual(['staff', 'beta testers']);
  });

  it('unquotes quoted strings and keeps other scalars as written', () => {
    const [c] = chunk('a.md', `---\ntitle: "Say \\"hi\\": a guide"\ndescription: 'It''s # not a comment'\nversion: 2.0\n---\nText.\n`);
    expect(c).toMatchObject({ title: 'Say "hi": a guide', description: "It's # not a comment", version: '2.0' });
  });

  it('refuses a page whose front matter is not YAML, naming the page', () => {
    const page = '---\ntitle: A\ndescription: Note: this breaks YAML\ngroups: [staff]\n---\nText.\n';
    expect(() => chunk('internal/a.md', page)).toThrow(InvalidFrontMatterError);
    expect(() => chunk('internal/a.md', page)).toThrow(/^internal\/a\.md: front matter is not valid YAML/);
  });
});

describe('MDX', () => {
  const page = `---
title: Install
---
import Tabs from '@theme/Tabs';
import TabItem from '@theme/TabItem';
export const toc = [];

{/* Shown on the landing page too. */}

Pick your system. <Badge text="new" /> <Highlight color="red">Linux</Highlight> is tested most.

<Tabs>
  <TabItem value="mac" label="macOS">

## Homebrew

Run \`brew install kiln\`.

  </TabItem>
</Tabs>

<Callout type="warning">Back up your *config* first.</Callout>
`;

  it('drops imports, exports, JSX tags and comments but keeps the text inside components', () => {
    const chunks = chunk('install.mdx', page);
    expect(chunks.map((c) => [c.headings, c.text])).toEqual([
      [[], 'Pick your system.  Linux is tested most.'],
      [['Homebrew'], 'Run brew install kiln.\n\nBack up your config first.'],
    ]);
  });

  it('reads an MDX page that MDX cannot parse as Markdown, so its text is still indexed', () => {
    const chunks = chunk('broken.mdx', '# Broken\n\n<!-- MDX has no HTML comments -->\n\nStill searchable when a < b.\n');
    expect(chunks.map((c) => c.text)).toEqual(['Still searchable when a < b.']);
  });
});

describe('passage text', () => {
  it('drops HTML comments, also across lines, and keeps the text of HTML', () => {
    expect(texts('a.md', '# A\n\n<!--\ninternal note\n-->\n\nBefore <!-- inline --> after.\n\n<details>\n<summary>Why</summary>\n\nBecause.\n\n</details>\n')).toBe(
      'Before  after.\n\nWhy\n\nBecause.',
    );
  });

  it('keeps the text of inline, reference and autolinks, and image alt text', () => {
    const md = '# A\n\nSee [the guide](/guide), [npm ci][ci], <https://npmjs.com> and ![a diagram](d.png).\n\n[ci]: /commands/npm-ci\n';
    expect(texts('a.md', md)).toBe('See the guide, npm ci, https://npmjs.com and a diagram.');
  });

  it('keeps lists and table cells as lines', () => {
    const md = '# A\n\n- one\n- two\n  1. nested\n\n| Flag | Meaning |\n| --- | --- |\n| `--dry-run` | change **nothing** |\n';
    expect(texts('a.md', md)).toBe('- one\n- two\n  1. nested\n\nFlag | Meaning\n--dry-run | change nothing');
  });
});
