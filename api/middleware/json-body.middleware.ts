import { isUtf8 } from 'node:buffer';
import express, { type NextFunction, type Request, type Response } from 'express';
import { AppError } from '../../shared/errors/app-error';

export const BODY_LIMIT_BYTES = 64 * 1024;
const parseJson = express.json({
  limit: BODY_LIMIT_BYTES,
  strict: false,
  type: () => true,
  // Invalid UTF-8 would otherwise be decoded into U+FFFD silently, merging distinct values.
  verify: (_req, _res, buf) => {
    if (!isUtf8(buf)) throw new AppError('INVALID_JSON', 'Request body is not valid UTF-8');
  },
});

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/** Body checks in the contract's order: 413, then 415, then 400 INVALID_JSON (via the parser). */
export function jsonBody(req: Request, _res: Response, next: NextFunction): void {
  // Only POST and PUT carry a body here; a body sent with GET or DELETE is ignored.
  if (!hasBody(req) || (req.method !== 'POST' && req.method !== 'PUT')) {
    req.body = undefined;
    return next();
  }
  if (Number(req.headers['content-length'] ?? 0) > BODY_LIMIT_BYTES) {
    return next(new AppError('PAYLOAD_TOO_LARGE', `Request body exceeds ${BODY_LIMIT_BYTES} bytes`, { limit: BODY_LIMIT_BYTES }));
  }
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(type)) {
    return next(new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send JSON with Content-Type: application/json'));
  }
  parseJson(req, _res, next);
}
