import { AppError } from './app-error';

const UNAVAILABLE_MESSAGES = [
  /Connection is closed/i,
  /Stream isn't writeable/i,
  /Command timed out/i,
  /Reached the max retries per request limit/i,
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND/,
  /timeout exceeded when trying to connect/i,
  /Connection terminated/i,
  /the database system is (starting up|shutting down)/i,
];

/** True for failures of Redis or Postgres connectivity (as opposed to bugs or bad input). */
export function isDependencyUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: string }).code;
  if (code && ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P03', '08006', '08001'].includes(code)) return true;
  return UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(error.message));
}

export const serviceUnavailable = () =>
  new AppError('SERVICE_UNAVAILABLE', 'A backing service is unavailable; retry shortly', undefined, { 'Retry-After': '1' });
