import { readFile, realpath } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import path from 'node:path';
import type { NodeResponse } from './rest/router';

const types: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.map': 'application/json',
};

/** True for the paths the playground owns: /playground and everything under /playground/. */
export const isPlaygroundPath = (pathname: string) => pathname === '/playground' || pathname.startsWith('/playground/');

/**
 * Serves the built playground (dist/playground, see playground/vite.config.mts) at /playground/. It is a static page:
 * it calls the API with the keys the user types in, so serving it needs no authentication.
 */
export function createPlaygroundHandler(dir: string) {
  return async (req: IncomingMessage | Http2ServerRequest, res: NodeResponse): Promise<void> => {
    const send = (status: number, headers: Record<string, string>, body: string | Buffer) => {
      res.writeHead(status, headers);
      res.end(req.method === 'HEAD' ? '' : body);
    };
    const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, { allow: 'GET, HEAD', 'content-type': 'application/json' }, JSON.stringify({ error: 'the playground is read-only', code: 'unimplemented' }));
    // Relative asset URLs resolve against /playground/, so the bare path redirects there.
    if (pathname === '/playground') return send(308, { location: '/playground/' }, '');
    const relative = decodeURIComponent(pathname.slice('/playground/'.length)) || 'index.html';
    const root = await realpath(dir).catch(() => undefined);
    if (!root) return send(404, { 'content-type': 'application/json' }, JSON.stringify({ error: 'the playground is not built: run `npm run build`', code: 'not_found' }));
    const file = path.resolve(root, relative);
    if (!file.startsWith(root + path.sep)) return send(404, { 'content-type': 'application/json' }, JSON.stringify({ error: 'no such file', code: 'not_found' }));
    const body = await readFile(file).catch(() => undefined);
    if (!body) return send(404, { 'content-type': 'application/json' }, JSON.stringify({ error: `no such file: ${relative.slice(0, 200)}`, code: 'not_found' }));
    // Vite puts a content hash in every asset name; only index.html must be fetched afresh.
    const cache = relative.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
    send(200, { 'content-type': types[path.extname(file)] ?? 'application/octet-stream', 'cache-control': cache, 'x-content-type-options': 'nosniff' }, body);
  };
}
