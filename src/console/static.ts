import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { declareNoKeyNeeded } from '../edge/declared-auth';

/**
 * Serves the console's page (console/ in the repository: plain HTML, CSS and ES modules, no build step) at /console/.
 * The files hold no data: the page signs in (POST /console/session) and then calls the public and operator APIs.
 */
export function consolePages(dir: string) {
  return async (scope: FastifyInstance): Promise<void> => {
    declareNoKeyNeeded(scope);
    await scope.register(fastifyStatic, {
      root: path.resolve(dir),
      prefix: '/console',
      redirect: true,
      index: ['index.html'],
      cacheControl: false,
      suppressWarning: true,
      setHeaders: (reply) => {
        // Unhashed names: every load revalidates, so a new gateway's page is never mixed with an old script.
        reply.header('cache-control', 'no-cache');
        reply.header('x-content-type-options', 'nosniff');
        reply.header('x-frame-options', 'DENY');
        reply.header(
          'content-security-policy',
          "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
        );
        reply.header('referrer-policy', 'same-origin');
      },
    });
  };
}
