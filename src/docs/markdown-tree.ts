// Parses a page into an mdast tree: CommonMark with GFM and YAML front matter, plus MDX syntax for `.mdx` pages.
import type { Code, InlineCode, Nodes, Root } from 'mdast';

/** The two parsers, made on the first page parsed: remark loads then, not with every process that imports the chunker. */
function makeParsers() {
  const { unified } = require('unified') as typeof import('unified');
  const load = <T>(name: string) => (require(name) as { default: T }).default;
  const markdown = unified()
    .use(load<typeof import('remark-parse').default>('remark-parse'))
    .use(load<typeof import('remark-frontmatter').default>('remark-frontmatter'), ['yaml'])
    .use(load<typeof import('remark-gfm').default>('remark-gfm'))
    .freeze();
  // The estree of each import and expression is not needed: passages keep none of them.
  const mdx = markdown().use(load<typeof import('remark-mdx').default>('remark-mdx'), { addResult: false }).freeze();
  return { markdown, mdx };
}
let parsers: ReturnType<typeof makeParsers> | undefined;

// `{#custom-id}` is an invalid JavaScript expression in MDX; escaped, it parses as text (as Docusaurus does).
const customIdBraces = /(?<!\\)\{(#[^\s{}]+)\}/g;
const escapedCustomIdBraces = /\\\{(#[^\s{}]+)\\\}/g;

/**
 * The page's tree. An `.mdx` page that MDX cannot parse (an HTML comment, a stray `<` or `{`) is read as plain
 * Markdown, so one broken page still gets its text indexed instead of failing the whole ingestion.
 */
export function parsePage(source: string, format: 'md' | 'mdx'): Root {
  parsers ??= makeParsers();
  const { markdown, mdx } = parsers;
  const text = source.replace(/\r\n?/g, '\n');
  if (format === 'md') return markdown.parse(text);
  const escaped = text.replace(customIdBraces, '\\{$1\\}');
  let tree: Root;
  try {
    tree = mdx.parse(escaped);
  } catch {
    return markdown.parse(text);
  }
  if (escaped !== text) unescapeCustomIdsInCode(tree);
  return tree;
}

/** Code shows its content verbatim, so the escape added before parsing is taken out again. */
function unescapeCustomIdsInCode(node: Nodes): void {
  if (node.type === 'code' || node.type === 'inlineCode') {
    (node as Code | InlineCode).value = node.value.replace(escapedCustomIdBraces, '{$1}');
  } else if ('children' in node) {
    for (const child of node.children) unescapeCustomIdsInCode(child);
  }
}

export function pageFormat(relativeFile: string): 'md' | 'mdx' {
  return /\.mdx$/i.test(relativeFile) ? 'mdx' : 'md';
}
