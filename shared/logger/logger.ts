import pino, { type Logger } from 'pino';

/** Paths never written to logs: keys travel in the authorization header. */
export const REDACT_PATHS = ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'key', 'secret'];

export function createLogger(level: string, name: string): Logger {
  return pino({ level, name, redact: { paths: REDACT_PATHS, censor: '[redacted]' } });
}
export type { Logger };
