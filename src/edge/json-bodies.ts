import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors';
import { maxBodyBytes } from './errors';

// application/json and application/<anything>+json, with or without parameters.
const jsonType = /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i;
const notJson = () => new AppError('invalid_argument', 'request body must be JSON, sent with content-type: application/json');

/**
 * REST bodies are JSON and nothing else, which also makes every cross-origin browser POST send a CORS preflight first.
 * An empty body is no body (the route's schema decides whether one is needed); prototype keys are dropped.
 */
export function acceptJsonBodiesOnly(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('remove', 'remove');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(jsonType, { parseAs: 'string', bodyLimit: maxBodyBytes }, (req, body, done) => {
    if (req.is404 || body === '') return done(null, undefined);
    // A signed body is verified as sent, before it is parsed (the route parses it then).
    if (req.routeOptions.config.rawBody) {
      req.rawBody = body as string;
      return done(null, undefined);
    }
    parseJson(req, body as string, (err, value) => (err ? done(new AppError('invalid_argument', 'request body is not valid JSON'), undefined) : done(null, value)));
  });
  // Any other type: nothing is read; a body that is there is refused before it is read.
  app.addContentTypeParser('*', (req, _payload, done) => {
    if (req.is404 || req.headers['content-length'] === '0') return done(null, undefined);
    done(notJson(), undefined);
  });
}
