import { isUtf8 } from 'node:buffer';
import express, { type NextFunction, type Request, type Response } from 'express';
import { AppError } from '../../shared/errors/app-error';

export const BODY_LIMIT_BYTES = 64 * 1024;

const tooLarge = () => new AppError('PAYLOAD_TOO_LARGE', `Request body exceeds ${BODY_LIMIT_BYTES} bytes`, { limit: BODY_LIMIT_BYTES });
const notUtf8 = () => new AppError('INVALID_JSON', 'Request body is not valid UTF-8');
const incomplete = () => new AppError('INVALID_JSON', 'Request body was incomplete');

/** body-parser, for what the direct reader below leaves to it: compressed bodies and other charsets. */
const parseJson = express.json({
  limit: BODY_LIMIT_BYTES,
  strict: false,
  type: () => true,
  // Invalid UTF-8 would otherwise be decoded into U+FFFD silently, merging distinct values.
  verify: (_req, _res, buf) => {
    if (!isUtf8(buf)) throw notUtf8();
  },
});

const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;
/** A content type whose parameters, if any, are only a UTF-8 charset. */
const PLAIN_JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;\s*charset\s*=\s*"?utf-?8"?\s*)?$/i;
/** The `charset` parameters of a content type (a client may name one more than once). */
const CHARSETS = /;\s*charset\s*=\s*"?([^";\s]*)"?/gi;
/** UTF-8 by either of its names, in any case. */
const UTF8 = /^utf-?8$/i;
const notUtf8Json = () => new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send JSON in UTF-8: no charset, or charset=utf-8');

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * Reads a UTF-8 JSON body sent without a Content-Encoding — nearly every request — straight
 * from the stream: the same results and errors as body-parser (`strict: false`, a leading BOM
 * dropped, an empty chunked body read as `{}`), without its per-request decoder and stream
 * plumbing (docs/adr/0016-hot-path.md).
 */
function readJson(req: Request, next: NextFunction): void {
  // The client may have gone while auth or the limiter waited: 'close' has fired already.
  if (req.destroyed || req.readableAborted) return next(incomplete());
  const chunks: Buffer[] = [];
  let size = 0;
  let settled = false;
  const settle = (error?: AppError): void => {
    if (settled) return;
    settled = true;
    req.off('data', onData).off('end', onEnd).off('error', onAborted).off('close', onClose);
    if (error) {
      // Discard the rest of the body so the connection can answer the error.
      req.resume();
      return next(error);
    }
    const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
    if (!isUtf8(raw)) return next(notUtf8());
    let text = raw.toString('utf8');
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.length === 0) {
      req.body = {};
      return next();
    }
    try {
      req.body = JSON.parse(text) as unknown;
    } catch {
      return next(new AppError('INVALID_JSON', 'Request body is not valid JSON'));
    }
    next();
  };
  const onData = (chunk: Buffer): void => {
    size += chunk.length;
    if (size > BODY_LIMIT_BYTES) settle(tooLarge());
    else chunks.push(chunk);
  };
  const onEnd = (): void => settle();
  const onAborted = (): void => settle(incomplete());
  const onClose = (): void => {
    if (!req.complete) onAborted();
  };
  req.on('data', onData).on('end', onEnd).on('error', onAborted).on('close', onClose);
}

/** Body checks in the contract's order: 413, then 415, then 400 INVALID_JSON. */
export function jsonBody(req: Request, res: Response, next: NextFunction): void {
  // Only POST and PUT carry a body here; a body sent with GET or DELETE is ignored.
  if (!hasBody(req) || (req.method !== 'POST' && req.method !== 'PUT')) {
    req.body = undefined;
    return next();
  }
  if (Number(req.headers['content-length'] ?? 0) > BODY_LIMIT_BYTES) return next(tooLarge());
  const type = req.headers['content-type'] ?? '';
  if (!JSON_TYPE.test(type)) {
    return next(new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send JSON with Content-Type: application/json'));
  }
  // JSON is UTF-8 (RFC 8259): another charset is refused before the body is read, whatever it holds.
  if (type.includes(';') && [...type.matchAll(CHARSETS)].some(([, charset]) => !UTF8.test(charset!))) return next(notUtf8Json());
  const encoding = req.headers['content-encoding'];
  if ((encoding === undefined || encoding.toLowerCase() === 'identity') && PLAIN_JSON_TYPE.test(type)) return readJson(req, next);
  parseJson(req, res, next);
}
