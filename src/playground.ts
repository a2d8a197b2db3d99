import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { declareNoKeyNeeded } from './edge/declared-auth';

/**
 * Serves the built playground (dist/playground, see playground/vite.config.mts) at /playground/, and redirects
 * /playground there. It is a static page: it calls the API with the keys the user types in, so it needs no key.
 */
export function playground(dir: string) {
  return async (scope: FastifyInstance): Promise<void> => {
    declareNoKeyNeeded(scope);
    await scope.register(fastifyStatic, {
      root: path.resolve(dir),
      prefix: '/playground',
      redirect: true,
      index: ['index.html'],
      cacheControl: false,
      suppressWarning: true,
      setHeaders: (reply, file) => {
        // Vite puts a content hash in every asset name; only index.html must be fetched afresh.
        reply.header('cache-control', file.includes(`${path.sep}assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
        reply.header('x-content-type-options', 'nosniff');
        // Its own policy, though it shares the console's origin: no framing (the keys typed into it stay the user's),
        // only its own scripts and styles, and the API it is pointed at (?api=) may be another docent.
        reply.header('x-frame-options', 'DENY');
        reply.header(
          'content-security-policy',
          "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' http: https:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'; object-src 'none'",
        );
        reply.header('referrer-policy', 'same-origin');
      },
    });
  };
}
