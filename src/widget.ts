import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { declareNoKeyNeeded } from './edge/declared-auth';

/** The files of dist/widget (widget/vite.config.mts) and the paths docs sites load them from. */
const files = { '/widget.js': 'widget.js', '/widget.mjs': 'docent-assistant.mjs' } as const;

/**
 * Serves the embeddable assistant: /widget.js (one script tag) and /widget.mjs (the element as an ES module). Any
 * origin may load them, as scripts and as modules (CORS `*`); whether a page may then call the assistant is the
 * assistant route's CORS, by the project's allowed origins. The names carry no hash, so caches revalidate after
 * five minutes (ETag), which is how long a new version takes to reach every site.
 */
export function widget(dir: string) {
  return async (scope: FastifyInstance): Promise<void> => {
    declareNoKeyNeeded(scope);
    await scope.register(fastifyStatic, { root: path.resolve(dir), serve: false, cacheControl: false, etag: true, lastModified: true });
    for (const [url, file] of Object.entries(files)) {
      scope.get(url, (_req, reply) => {
        reply.header('cache-control', 'public, max-age=300, stale-while-revalidate=86400');
        reply.header('access-control-allow-origin', '*');
        reply.header('cross-origin-resource-policy', 'cross-origin');
        reply.header('x-content-type-options', 'nosniff');
        reply.header('content-type', 'text/javascript; charset=utf-8');
        return reply.sendFile(file);
      });
    }
  };
}
