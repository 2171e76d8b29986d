import pino, { type DestinationStream, type Logger } from 'pino';

/** Paths never written to logs: keys travel in the authorization header. */
const REDACT_PATHS = ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'key', 'secret'];

/** A logger to stdout, or to `destination` (tests read what was logged). */
export function createLogger(level: string, name: string, destination?: DestinationStream): Logger {
  return pino({ level, name, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, destination);
}
export type { Logger };
