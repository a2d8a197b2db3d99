import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { negotiate } from '@fastify/accept-negotiator';
import type { FastifyInstance } from 'fastify';
import { declareNoKeyNeeded } from './edge/declared-auth';
import { AppError } from './errors';

/** The paths docs sites load the assistant from, and the files of dist/widget (widget/vite.config.mts) behind them. */
const files = { '/widget.js': 'widget.js', '/widget.mjs': 'docent-assistant.mjs' } as const;

type Encoding = 'br' | 'gzip' | 'identity';

interface Built {
  /** A hash of the uncompressed file. */
  etag: string;
  bodies: Record<Encoding, Buffer>;
}

/** A built file with its brotli and gzip forms (written beside it by the build), and an ETag of its content. */
async function load(dir: string, file: string): Promise<Built> {
  const at = path.join(dir, file);
  const [identity, br, gzip] = await Promise.all([readFile(at), readFile(`${at}.br`), readFile(`${at}.gz`)]).catch(() => {
    throw new AppError('not_found', `${file} is not built: run npm run build:widget`);
  });
  return { etag: createHash('sha256').update(identity).digest('base64url').slice(0, 27), bodies: { br, gzip, identity } };
}

/**
 * Serves the embeddable assistant: /widget.js (one script tag) and /widget.mjs (the element as an ES module). Any
 * origin may load them, as classic scripts and as modules (CORS `*`); whether a page may then call the assistant is
 * the assistant route's CORS, by the project's allowed origins. The names carry no hash, so caches keep a copy for
 * five minutes and then revalidate it by ETag. Files are read once and sent as built, already compressed.
 */
export function widget(dir: string) {
  return async (scope: FastifyInstance): Promise<void> => {
    declareNoKeyNeeded(scope);
    const loaded = new Map<string, Promise<Built>>();
    for (const [url, file] of Object.entries(files)) {
      scope.get(url, async (req, reply) => {
        if (!loaded.has(file)) loaded.set(file, load(dir, file));
        const built = await loaded.get(file)!.catch((err: unknown) => {
          loaded.delete(file);
          throw err;
        });
        const header = req.headers['accept-encoding'];
        const encoding = (typeof header === 'string' && negotiate(header, ['br', 'gzip'])) || 'identity';
        // Each encoding is its own representation, so it has its own ETag.
        const etag = `"${built.etag}-${encoding}"`;
        reply.headers({
          'content-type': 'text/javascript; charset=utf-8',
          'cache-control': 'public, max-age=300',
          etag,
          vary: 'accept-encoding',
          'access-control-allow-origin': '*',
          'cross-origin-resource-policy': 'cross-origin',
          'x-content-type-options': 'nosniff',
        });
        if (req.headers['if-none-match'] === etag) return reply.code(304).send();
        if (encoding !== 'identity') reply.header('content-encoding', encoding);
        return reply.send(built.bodies[encoding]);
      });
    }
  };
}
