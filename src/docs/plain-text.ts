// mdast blocks as the plain text a reader sees: link, image and component text kept; markup, fences and comments gone.
import type { List, Nodes, RootContent } from 'mdast';
import { toString as nodeText } from 'mdast-util-to-string';

/** Blocks separated by blank lines, where long sections are split. */
export function blocksText(nodes: readonly RootContent[]): string {
  return nodes.map(blockText).filter(Boolean).join('\n\n');
}

/** One block's text; '' for what a reader never sees (imports, expressions, link definitions, front matter). */
export function blockText(node: RootContent): string {
  switch (node.type) {
    case 'paragraph':
    case 'heading':
      return phrasingText(node).trim();
    case 'code':
      return node.value;
    case 'html':
      return htmlText(node.value);
    case 'list':
      return listText(node);
    case 'table':
      return node.children.map((row) => row.children.map((cell) => phrasingText(cell).trim()).join(' | ')).join('\n');
    case 'blockquote':
    case 'footnoteDefinition':
    case 'mdxJsxFlowElement':
      return blocksText(node.children);
    default:
      return '';
  }
}

/** Inline content: emphasis, links and JSX unwrapped; MDX expressions (`{/* … *\/}` comments) and HTML tags dropped. */
export function phrasingText(node: Nodes): string {
  switch (node.type) {
    case 'break':
      return '\n';
    case 'html':
      return htmlText(node.value);
    case 'mdxTextExpression':
    case 'mdxFlowExpression':
    case 'footnoteReference':
      return '';
    default:
      return 'children' in node ? node.children.map(phrasingText).join('') : nodeText(node);
  }
}

function listText(list: List): string {
  const items = list.children.map((item, i) => {
    const marker = list.ordered ? `${(list.start ?? 1) + i}. ` : '- ';
    const body = item.children
      .map(blockText)
      .filter(Boolean)
      .join(item.spread ? '\n\n' : '\n');
    return marker + body.replace(/\n(?=.)/g, '\n  ');
  });
  return items.join(list.spread ? '\n\n' : '\n');
}

/** Raw HTML keeps only its text: comments, scripts and tags go (`<details><summary>Why</summary>` reads "Why"). */
function htmlText(html: string): string {
  return html
    .replace(/<!--[\s\S]*?(?:-->|$)/g, '')
    .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, '')
    .replace(/<\/?[A-Za-z][^>]*>/g, '')
    .trim();
}
