// A page's sections: the text under each heading, with the heading's anchor as the docs site would render it.
import GithubSlugger from 'github-slugger';
import type { Heading, Root, RootContent } from 'mdast';
import { blocksText, phrasingText } from './plain-text';

export interface PageSection {
  /** 0 for the text before the first heading, else the heading's depth (1–6). */
  depth: number;
  heading: string | null;
  /** '' for the text before the first heading. */
  anchor: string;
  text: string;
}

// `## Options {#opts}`: the anchor is `opts` and the braces are not part of the heading (Docusaurus, Pandoc, kramdown).
const customId = /\s*\{#([^\s{}]+)\}\s*$/;

/** Splits the page at its headings, including headings inside MDX components (such as a `<TabItem>`). */
export function pageSections(tree: Root): PageSection[] {
  const slugger = new GithubSlugger();
  // The text before the first heading has the anchor ''; a heading that slugs to '' must not share its id.
  slugger.occurrences[''] = 0;
  const sections: Array<Omit<PageSection, 'text'> & { blocks: RootContent[] }> = [{ depth: 0, heading: null, anchor: '', blocks: [] }];
  for (const node of flowContent(tree.children)) {
    if (node.type !== 'heading') {
      sections.at(-1)!.blocks.push(node);
      continue;
    }
    const { text, id } = headingText(node);
    sections.push({ depth: node.depth, heading: text, anchor: id === undefined ? slugger.slug(text) : uniqueId(slugger, id), blocks: [] });
  }
  return sections.map(({ blocks, ...section }) => ({ ...section, text: blocksText(blocks) }));
}

/** Block nodes in reading order, MDX components unwrapped so that their headings and text are the page's. */
function* flowContent(nodes: readonly RootContent[]): Generator<RootContent> {
  for (const node of nodes) {
    if (node.type === 'mdxJsxFlowElement') yield* flowContent(node.children);
    else yield node;
  }
}

function headingText(heading: Heading): { text: string; id?: string } {
  const text = phrasingText(heading).trim();
  const m = customId.exec(text);
  return m ? { text: text.slice(0, m.index), id: m[1]! } : { text };
}

/** A custom id is used as written; a repeated one gets `-1`, `-2` like a repeated heading, so passage ids stay unique. */
function uniqueId(slugger: GithubSlugger, id: string): string {
  if (id in slugger.occurrences) return slugger.slug(id, true);
  slugger.occurrences[id] = 0;
  return id;
}
