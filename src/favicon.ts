import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { declareNoKeyNeeded } from './edge/declared-auth';

/** docent's mark at the paths browsers ask for (/favicon.ico by default, /favicon.svg where a page links it). */
export function favicon(consoleDir: string) {
  return async (scope: FastifyInstance): Promise<void> => {
    declareNoKeyNeeded(scope);
    const files = { ico: await readFile(path.join(consoleDir, 'favicon.ico')), svg: await readFile(path.join(consoleDir, 'favicon.svg')) };
    const send = (type: string, body: Buffer) => (_req: unknown, reply: FastifyReply) =>
      reply.header('cache-control', 'public, max-age=86400').header('x-content-type-options', 'nosniff').type(type).send(body);
    scope.get('/favicon.ico', send('image/x-icon', files.ico));
    scope.get('/favicon.svg', send('image/svg+xml', files.svg));
  };
}
