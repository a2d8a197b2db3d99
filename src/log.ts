import { pino, type Logger } from 'pino';

export type { Logger };

// Fields that may hold secrets are redacted wherever they appear in a log line.
const redact = ['authorization', '*.authorization', 'headers.authorization', 'apiKey', '*.apiKey', 'token', '*.token'];

export function createLogger(level: string, name: string): Logger {
  return pino({ name, level, redact: { paths: redact, censor: '[redacted]' } });
}
