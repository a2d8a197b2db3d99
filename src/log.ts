import { pino, type Logger } from 'pino';

export type { Logger };

// Fields that may hold secrets are redacted wherever they appear in a log line.
const redact = ['authorization', '*.authorization', 'headers.authorization', 'apiKey', '*.apiKey', 'token', '*.token'];

/** Logs JSON lines to stdout, or to `destination` (tests capture the output this way). */
export function createLogger(level: string, name: string, destination?: NodeJS.WritableStream): Logger {
  const options = { name, level, redact: { paths: redact, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}
