import { h } from './dom.js';

/**
 * A plan's Markdown as DOM nodes: headings, ordered and bulleted lists, fenced code, paragraphs, and inline code,
 * bold and http(s) links. Every piece of text stays text (never parsed as HTML), so a plan cannot inject markup.
 */
export function renderMarkdown(text) {
  const blocks = [];
  const lines = String(text ?? '').split('\n');
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (line.trim() === '') {
      i++;
    } else if (/^```/.test(line)) {
      const code = [];
      for (i++; i < lines.length && !/^```/.test(lines[i]); i++) code.push(lines[i]);
      i++; // the closing fence
      blocks.push(h('pre', {}, h('code', {}, code.join('\n'))));
    } else if (/^#{1,6}\s/.test(line)) {
      // Plan headings sit under the page's own h2: one level down, never above h3.
      const level = Math.min(6, line.match(/^#+/)[0].length + 2);
      blocks.push(h(`h${level}`, {}, inline(line.replace(/^#+\s+/, ''))));
      i++;
    } else if (listItem(line)) {
      const ordered = /^\s*\d+[.)]\s/.test(line);
      const items = [];
      for (; i < lines.length && listItem(lines[i]); i++) items.push(h('li', {}, inline(lines[i].replace(/^\s*(?:[-*+]|\d+[.)])\s+/, ''))));
      blocks.push(h(ordered ? 'ol' : 'ul', {}, items));
    } else {
      const para = [];
      for (; i < lines.length && lines[i].trim() !== '' && !/^(```|#{1,6}\s)/.test(lines[i]) && !listItem(lines[i]); i++) para.push(lines[i].trim());
      blocks.push(h('p', {}, inline(para.join(' '))));
    }
  }
  return blocks;
}

const listItem = (line) => /^\s*(?:[-*+]|\d+[.)])\s+/.test(line);

/** Inline code, bold and links; a link that is not http(s) stays text. */
function inline(text) {
  const parts = [];
  const pattern = /`([^`]+)`|\*\*([^*]+)\*\*|\[([^\]]+)\]\(([^)\s]+)\)/g;
  let last = 0;
  for (let m = pattern.exec(text); m; m = pattern.exec(text)) {
    parts.push(text.slice(last, m.index));
    if (m[1] !== undefined) parts.push(h('code', {}, m[1]));
    else if (m[2] !== undefined) parts.push(h('strong', {}, m[2]));
    else if (/^https?:\/\//i.test(m[4])) parts.push(h('a', { href: m[4], rel: 'noopener noreferrer' }, m[3]));
    else parts.push(m[0]);
    last = pattern.lastIndex;
  }
  parts.push(text.slice(last));
  return parts;
}
