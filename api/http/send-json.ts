import type { Response } from 'express';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Sends `body` as JSON with `status`: what `res.status(status).json(body)` sends for a POST,
 * PUT, DELETE or GET of this API (no ETag, no replacer or spaces), without Express's per-call
 * settings lookups and content-type negotiation (docs/adr/0016-hot-path.md).
 */
export function sendJson(res: Response, status: number, body: unknown): void {
  sendJsonText(res, status, JSON.stringify(body));
}

/** sendJson for a body already serialised (the idempotent POSTs store the same text they send). */
export function sendJsonText(res: Response, status: number, text: string): void {
  // Answered already (503 at the request's deadline): the late result is dropped, and the
  // status the access log and metering read stays the one sent.
  if (res.headersSent) return;
  res.statusCode = status;
  res.setHeader('Content-Type', JSON_TYPE);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
