import type { Nodes, Root } from 'mdast';
import type { ReactNode } from 'react';
import remarkGfm from 'remark-gfm';
import remarkParse from 'remark-parse';
import { unified } from 'unified';

const parser = unified().use(remarkParse).use(remarkGfm);

/** Only web links are followed: `javascript:` and the like render as text. */
const safeHref = (url: string) => (/^(https?:|mailto:|#|\/)/i.test(url) ? url : undefined);

function children(node: { children: Nodes[] }): ReactNode[] {
  return node.children.map((child, i) => render(child, i));
}

/**
 * Markdown to React elements, node by node: HTML in the text (`html` nodes) is shown as text and never parsed, so an
 * answer cannot inject markup or script into the page.
 */
function render(node: Nodes, key: number): ReactNode {
  switch (node.type) {
    case 'root':
      return <>{children(node)}</>;
    case 'paragraph':
      return <p key={key}>{children(node)}</p>;
    case 'heading': {
      const Tag = `h${Math.min(node.depth + 2, 6)}` as 'h3';
      return <Tag key={key}>{children(node)}</Tag>;
    }
    case 'text':
      return cited(node.value, key);
    case 'html':
      return <span key={key}>{node.value}</span>;
    case 'emphasis':
      return <em key={key}>{children(node)}</em>;
    case 'strong':
      return <strong key={key}>{children(node)}</strong>;
    case 'delete':
      return <del key={key}>{children(node)}</del>;
    case 'inlineCode':
      return <code key={key}>{node.value}</code>;
    case 'code':
      return (
        <pre key={key}>
          <code>{node.value}</code>
        </pre>
      );
    case 'blockquote':
      return <blockquote key={key}>{children(node)}</blockquote>;
    case 'list':
      return node.ordered ? <ol key={key}>{children(node)}</ol> : <ul key={key}>{children(node)}</ul>;
    case 'listItem':
      return <li key={key}>{children(node)}</li>;
    case 'link': {
      const href = safeHref(node.url);
      return href ? (
        <a key={key} href={href} target="_blank" rel="noreferrer noopener">
          {children(node)}
        </a>
      ) : (
        <span key={key}>{children(node)}</span>
      );
    }
    case 'break':
      return <br key={key} />;
    case 'thematicBreak':
      return <hr key={key} />;
    case 'table':
      return (
        <table key={key}>
          <tbody>{children(node)}</tbody>
        </table>
      );
    case 'tableRow':
      return <tr key={key}>{children(node)}</tr>;
    case 'tableCell':
      return <td key={key}>{children(node)}</td>;
    // Images would load from wherever the text points: shown as their alt text instead.
    case 'image':
      return node.alt ?? '';
    default:
      return 'children' in node ? <span key={key}>{children(node as { children: Nodes[] })}</span> : 'value' in node ? String(node.value) : null;
  }
}

/** Where an answer's `[n]` marker points: the id of its n-th source in the list below it, while rendering one answer. */
let sourceAnchor: ((n: number) => string | undefined) | undefined;

/** Text with its `[n]` markers as links to the numbered sources. */
function cited(text: string, key: number): ReactNode {
  if (!sourceAnchor || !/\[\d+\]/.test(text)) return text;
  // Each piece keyed by where it starts in the text: the pieces of one text never move.
  let at = 0;
  const pieces = text.split(/(\[\d+\])/).map((piece) => {
    const start = at;
    at += piece.length;
    return { piece, start };
  });
  return (
    <span key={key}>
      {pieces.map(({ piece, start }) => {
        const id = /^\[(\d+)\]$/.test(piece) ? sourceAnchor?.(Number(piece.slice(1, -1))) : undefined;
        return id ? (
          <a key={start} href={`#${id}`} className="citation">
            {piece}
          </a>
        ) : (
          <span key={start}>{piece}</span>
        );
      })}
    </span>
  );
}

/**
 * An answer rendered as Markdown, safely (no raw HTML, no script links, no remote images); `sources` names the id of
 * each numbered source, so that its `[n]` marker links there.
 */
export function Markdown({ text, sources }: { text: string; sources?: (n: number) => string | undefined }) {
  sourceAnchor = sources;
  try {
    return <div className="text markdown">{render(parser.parse(text) as Root, 0)}</div>;
  } finally {
    sourceAnchor = undefined;
  }
}
