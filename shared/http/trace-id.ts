import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';

/**
 * The X-Request-Id of this response, which an error body repeats as its `traceId`. A response
 * the API's request log has not seen (the dashboard's, a worker's) is given a new one here, so
 * body and header always agree.
 */
export function traceIdOf(res: ServerResponse): string {
  const given = res.getHeader('X-Request-Id');
  if (typeof given === 'string') return given;
  const id = randomUUID();
  if (!res.headersSent) res.setHeader('X-Request-Id', id);
  return id;
}
