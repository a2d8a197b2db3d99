import { AsyncLocalStorage } from 'node:async_hooks';
import { pino, type Logger } from 'pino';

export type { Logger };

// Fields that may hold secrets are redacted wherever they appear in a log line.
const redact = ['authorization', '*.authorization', 'headers.authorization', 'apiKey', '*.apiKey', 'token', '*.token'];

// Anything shaped like a docent key is masked in the final line too, e.g. inside an error message a library built.
const keyShape = /\b(docent_(?:admin|asst)_)[A-Za-z0-9_-]+/g;

/** Fields every log line written while handling one request carries (its request id). */
export const logContext = new AsyncLocalStorage<{ requestId: string }>();

/** Logs JSON lines to stdout, or to `destination` (tests capture the output this way). */
export function createLogger(level: string, name: string, destination?: NodeJS.WritableStream): Logger {
  const options = {
    name,
    level,
    redact: { paths: redact, censor: '[redacted]' },
    mixin: () => logContext.getStore() ?? {},
    hooks: { streamWrite: (line: string) => line.replace(keyShape, '$1[redacted]') },
  };
  return destination ? pino(options, destination) : pino(options);
}
