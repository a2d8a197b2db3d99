import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { micromark } from 'micromark';
import { gfm, gfmHtml } from 'micromark-extension-gfm';
import { pageSections } from './docs/sections';
import { parsePage } from './docs/markdown-tree';
import { declareNoKeyNeeded } from './edge/declared-auth';

/** A page path under /docs/: folders and names of letters, digits, `-` and `_`, optionally ending `.md` (as the pages link each other). */
const pageShape = /^([A-Za-z0-9_-]+\/)*[A-Za-z0-9_-]+(\.md)?$/;
/** The pictures the pages show (screenshots, charts). */
const assetTypes: Record<string, string> = { '.png': 'image/png', '.svg': 'image/svg+xml' };
const assetShape = /^([A-Za-z0-9_-]+\/)*[A-Za-z0-9_.-]+\.(png|svg)$/;

const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/**
 * A page as HTML: GFM through micromark (raw HTML in the page shows as text), and each heading the id the ingest gave
 * its section (src/docs/sections.ts), so a cited passage's `#anchor` opens at its heading.
 */
export function renderPage(markdown: string): { title: string; html: string } {
  const anchors = pageSections(parsePage(markdown, 'md'))
    .filter((s) => s.depth > 0)
    .map((s) => s.anchor);
  let n = 0;
  const html = micromark(markdown, { extensions: [gfm()], htmlExtensions: [gfmHtml()] }).replace(/<h([1-6])>/g, (tag, depth: string) => {
    const id = anchors[n++];
    return id ? `<h${depth} id="${escapeHtml(id)}">` : tag;
  });
  const title = /^#\s+(.+)$/m.exec(markdown)?.[1]?.trim() ?? 'docent';
  return { title, html };
}

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)} · docent docs</title><link rel="icon" href="/favicon.svg" type="image/svg+xml"><link rel="stylesheet" href="/docs/docs.css"></head><body><main>${body}</main></body></html>`;

const css = `body{font:16px/1.6 system-ui,sans-serif;margin:0;color:#1b1b1b;background:#fff}main{max-width:52rem;margin:0 auto;padding:1.5rem}
pre{overflow-x:auto;background:#f4f4f4;padding:.75rem;border-radius:4px}code{font-size:.9em}table{border-collapse:collapse;display:block;overflow-x:auto}
td,th{border:1px solid #ddd;padding:.3rem .5rem;text-align:left}img{max-width:100%}a{color:#0645ad}:target{background:#fff7cc}`;

/**
 * docent's own documentation (the repository's docs/), served at /docs/ as pages a browser reads: the pages the
 * built-in domain `docent.local` answers from (src/cli/self-docs.ts), so each source link of an answer opens the page
 * at its heading. The files are read on each request; nothing but docs/ is reachable.
 */
export function ownDocs(dir: string) {
  const root = path.resolve(dir);
  const headers = {
    'content-security-policy': "default-src 'none'; img-src 'self'; style-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-cache',
  };
  return async (scope: FastifyInstance): Promise<void> => {
    declareNoKeyNeeded(scope);
    scope.get('/docs', async (_req, reply) => reply.redirect('/docs/'));
    scope.get('/docs/docs.css', async (_req, reply) => reply.headers(headers).type('text/css; charset=utf-8').send(css));
    scope.get('/docs/*', async (req, reply) => {
      const rel = (req.params as { '*': string })['*'] || 'README';
      const notFound = () => reply.code(404).headers(headers).type('text/html; charset=utf-8').send(page('Not found', '<h1>Not found</h1><p><a href="/docs/">docent docs</a></p>'));
      if (assetShape.test(rel)) {
        const body = await readFile(path.join(root, rel)).catch(() => null);
        return body ? reply.headers(headers).type(assetTypes[path.extname(rel)]!).send(body) : notFound();
      }
      if (!pageShape.test(rel)) return notFound();
      const markdown = await readFile(path.join(root, `${rel.replace(/\.md$/, '')}.md`), 'utf8').catch(() => null);
      if (markdown === null) return notFound();
      const { title, html } = renderPage(markdown);
      // Relative links and pictures resolve from the page's own folder, as on the forge.
      const base = `/docs/${path.posix.dirname(rel) === '.' ? '' : `${path.posix.dirname(rel)}/`}`;
      return reply
        .headers(headers)
        .type('text/html; charset=utf-8')
        .send(page(title, html.replace(/(href|src)="(?![a-z]+:|\/|#)/g, `$1="${base}`)));
    });
  };
}
