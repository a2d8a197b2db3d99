import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, toRestError } from '../errors';
import type { Logger } from '../log';

/** The largest REST body accepted; larger ones are refused before they are read. */
export const maxBodyBytes = 1024 * 1024;

type FastifyValidationError = FastifyError & { validation: Array<{ instancePath: string; message?: string }>; validationContext?: string };

const isValidationError = (err: unknown): err is FastifyValidationError => err instanceof Error && Array.isArray((err as Partial<FastifyValidationError>).validation);

/** A schema misfit as parseInput words it: up to three `field: problem` entries. */
function validationMessage(err: FastifyValidationError): string {
  const problems = err.validation.slice(0, 3).map((v) => {
    const field = v.instancePath.replace(/^\//, '').replaceAll('/', '.');
    return field ? `${field}: ${v.message ?? 'is invalid'}` : (v.message ?? 'is invalid');
  });
  return `${err.validationContext === 'params' ? 'path parameter ' : ''}${problems.join('; ')}`;
}

// Fastify's and its plugins' own refusals, in docent's words and codes (statuses follow the one error table).
const fastifyRefusals: Record<string, () => AppError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new AppError('invalid_argument', `request body is larger than ${maxBodyBytes} bytes`),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new AppError('invalid_argument', 'request body must be JSON, sent with content-type: application/json'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new AppError('invalid_argument', 'request body does not match its content-length'),
  FST_ERR_BAD_URL: () => new AppError('invalid_argument', 'the path is not valid percent-encoding'),
  FST_ERR_MAX_PARAM_LENGTH: () => new AppError('invalid_argument', 'a path parameter is longer than 128 characters'),
  FST_STATIC_FORBIDDEN_PATH: () => new AppError('not_found', 'no such file'),
};

/** Narrows anything thrown while handling a request to an AppError or leaves it for `toRestError` to hide. */
function publicFormOf(err: unknown): unknown {
  if (err instanceof AppError) return err;
  if (isValidationError(err)) return new AppError('invalid_argument', validationMessage(err));
  const fastifyError = err as Partial<FastifyError>;
  const refusal = typeof fastifyError.code === 'string' ? fastifyRefusals[fastifyError.code] : undefined;
  if (refusal) return refusal();
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return new AppError(status === 404 ? 'not_found' : 'invalid_argument', 'the request is malformed');
  return err;
}

/** Sends any failure in the one REST error shape; 5xx are logged with the error, which never reaches the client. */
export function sendError(err: unknown, req: FastifyRequest, reply: FastifyReply, log: Logger): FastifyReply | undefined {
  const e = toRestError(publicFormOf(err));
  if (e.status >= 500) log[e.status === 500 ? 'error' : 'warn']({ err, path: req.routeOptions.url }, 'request failed');
  if (reply.raw.headersSent) {
    reply.raw.destroy();
    return undefined;
  }
  // Fastify closes after a refused body; keeping the connection lets Node drop the rest of the body instead of
  // resetting the socket under a client that is still sending (and has not read the answer yet).
  reply.removeHeader('connection');
  // Serialized here: the body is the error shape by construction, and Fastify would add a charset to the type.
  return reply.code(e.status).headers(e.headers).type('application/json').serializer(JSON.stringify).send(e.body);
}

/** Every refusal in one shape: handler errors, Fastify's own (bad JSON, body too large, bad URL), unknown paths. */
export function answerErrorsInOneShape(app: FastifyInstance, log: Logger): void {
  app.setErrorHandler((err, req, reply) => sendError(err, req, reply, log));
  app.setNotFoundHandler((req, reply) => sendError(new AppError('not_found', `no such path: ${req.url.split('?')[0]!.slice(0, 200)}`), req, reply, log));
  // Fastify appends "; charset=utf-8" to JSON; docent's answers have always been plain application/json.
  app.addHook('onSend', async (_req, reply, payload) => {
    if (reply.getHeader('content-type') === 'application/json; charset=utf-8') reply.header('content-type', 'application/json');
    return payload;
  });
}
