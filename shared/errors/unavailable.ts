import { errorCode, PG_CONNECTION_LOST } from './pg-errors';
import { AppError } from './app-error';

/** Node's errno names for a connection refused, reset, timed out or broken. */
const NETWORK_ERRORS: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE']);

const UNAVAILABLE_MESSAGES = [
  /Connection is closed/i,
  /Stream isn't writeable/i,
  /Command timed out/i,
  /Reached the max retries per request limit/i,
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND/,
  /timeout exceeded when trying to connect/i,
  // A statement past the client's read deadline (a frozen server, a cut network).
  /^Query read timeout$/,
  /Connection terminated/i,
  /Client has encountered a connection error and is not queryable/i,
  /the database system is (starting up|shutting down)/i,
  // Redis refusing writes: out of memory under noeviction, or a replica after a failover.
  /^OOM command not allowed/,
  /^READONLY /,
  // A Redis Cluster while a master is replaced or its slots move (docs/SCALING.md#redis). A
  // command sent just before the client learns the new slot map gets MOVED back.
  /^(CLUSTERDOWN|TRYAGAIN|MASTERDOWN|LOADING|MOVED|ASK) /,
  /Too many Cluster redirections/i,
  /None of startup nodes is available/i,
  /Cluster isn't ready/i,
  /Cluster is disconnect/i,
  /Failed to refresh slots cache/i,
];

/** True for failures of Redis or Postgres connectivity (as opposed to bugs or bad input). */
export function isDependencyUnavailable(error: unknown): boolean {
  // Shaped like an Error rather than `instanceof Error`: a socket's errors are made by Node's own
  // realm, which a sandbox (a test runner's) does not share.
  if (typeof error !== 'object' || error === null || typeof (error as { message?: unknown }).message !== 'string') return false;
  const code = errorCode(error);
  if (code && (NETWORK_ERRORS.has(code) || PG_CONNECTION_LOST.has(code))) return true;
  const message = (error as { message: string }).message;
  return UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message));
}

/**
 * True for a Redis command given up after the client's command timeout: it was sent, so Redis may
 * still run it, later (a server that hung answers again), unlike a command refused unsent.
 */
export function isCommandTimeout(error: unknown): boolean {
  return typeof error === 'object' && error !== null && /Command timed out/i.test(String((error as { message?: unknown }).message));
}

export const serviceUnavailable = () =>
  new AppError('SERVICE_UNAVAILABLE', 'A backing service is unavailable; retry shortly', undefined, { 'Retry-After': '1' });
