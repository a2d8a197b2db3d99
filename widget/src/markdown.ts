import { micromark } from 'micromark';

/** Links go to the web (or mail) only. */
const safeUrl = /^(?:https?:|mailto:|#)/i;

/**
 * An answer's Markdown as a fragment. micromark is safe by default: raw HTML in the text comes out escaped, as text,
 * and links with other protocols than http(s), mailto and the like lose their href. The HTML is parsed in an inert
 * template (nothing in it loads or runs there); images become their alt text, so an answer cannot load remote content.
 */
export function renderMarkdown(text: string, doc: Document): DocumentFragment {
  const template = doc.createElement('template');
  template.innerHTML = micromark(text);
  const fragment = template.content;
  for (const img of fragment.querySelectorAll('img')) img.replaceWith(img.alt);
  for (const a of fragment.querySelectorAll('a')) {
    if (!safeUrl.test(a.getAttribute('href') ?? '')) a.removeAttribute('href');
    a.target = '_blank';
    a.rel = 'noopener noreferrer';
  }
  return fragment;
}

/** A source the answer cites as `[n]`. */
export interface Citation {
  n: string;
  url: string;
  title: string;
}

/** Turns the `[n]` markers of the answer's text into links to the cited page and heading. */
export function linkCitations(root: ParentNode, citations: Citation[], doc: Document): void {
  const byNumber = new Map(citations.filter((c) => safeUrl.test(c.url)).map((c) => [c.n, c]));
  if (!byNumber.size) return;
  const walker = doc.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) => (node.parentElement?.closest('a, code, pre') ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
  });
  const texts: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) texts.push(n as Text);
  for (const text of texts) {
    const parts = text.data.split(/(\[\d{1,2}\])/);
    if (parts.length === 1) continue;
    const replaced = parts.map((part) => {
      const cited = byNumber.get(/^\[(\d{1,2})\]$/.exec(part)?.[1] ?? '');
      if (!cited) return doc.createTextNode(part);
      const a = doc.createElement('a');
      a.href = cited.url;
      a.className = 'cite';
      a.dataset.sourceId = cited.n;
      a.target = '_blank';
      a.rel = 'noopener noreferrer';
      a.title = cited.title;
      a.textContent = part;
      return a;
    });
    text.replaceWith(...replaced);
  }
}
