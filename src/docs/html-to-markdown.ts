// A published page's main content as Markdown the chunker reads: navigation, header and footer left out.
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';

export interface PageMarkdown {
  title: string;
  markdown: string;
}

function turndown(): TurndownService {
  const service = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
  // `## Heading {#id}` keeps the site's own anchor (src/docs/sections.ts reads it), so citations land on it.
  service.addRule('headingWithId', {
    filter: (node) => /^H[1-6]$/.test(node.nodeName) && Boolean(headingId(node)),
    replacement: (content, node) => {
      const level = Number(node.nodeName[1]);
      const text = content
        .replace(/\s+/g, ' ')
        .replace(/\s*#\s*$/, '')
        .trim();
      return `\n\n${'#'.repeat(level)} ${text} {#${headingId(node)}}\n\n`;
    },
  });
  // The "¶"/"#" permalinks generators put in headings are not text.
  service.addRule('headingPermalink', {
    filter: (node) =>
      node.nodeName === 'A' && /^H[1-6]$/.test(node.parentNode?.nodeName ?? '') && (node.getAttribute('href') ?? '').startsWith('#') && /^(?:[#¶§\s]|🔗)*$/u.test(node.textContent ?? ''),
    replacement: () => '',
  });
  return service;
}

/** The heading's own id, or that of an anchor inside it (`<h2><a id="x">`), as generators write them. */
function headingId(node: TurndownService.Node): string | undefined {
  const own = node.getAttribute('id');
  if (own) return own;
  const inner = node.querySelector('a[id], a[name]');
  return inner?.getAttribute('id') ?? inner?.getAttribute('name') ?? undefined;
}

/** Readability finds the article; Turndown writes it as Markdown. Undefined when the page has no readable content. */
export function htmlToMarkdown(html: string, url: string): PageMarkdown | undefined {
  const { document } = parseHTML(html);
  // Read before Readability rewrites the document: the page's h1 names it without the site's suffix (" | Acme").
  const h1 = document.querySelector('main h1, article h1, h1')?.textContent?.trim();
  // Classes kept: Turndown reads a code block's language from `language-*`.
  const article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0], { keepClasses: true }).parse();
  if (!article?.content) return undefined;
  const title = (h1 || article.title || new URL(url).pathname).trim();
  const body = turndown().turndown(article.content).trim();
  if (!body) return undefined;
  // The title as front matter: Readability often drops the page's h1, which the chunker would take it from.
  return { title, markdown: `---\ntitle: ${JSON.stringify(title)}\n---\n\n${body}\n` };
}
