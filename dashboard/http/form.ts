import express from 'express';
import type { Request } from 'express';
import { z } from 'zod';
import { AppError } from '../../shared/errors/app-error';

/** Forms are small: a few fields. Anything bigger is refused before it is read further. */
export const FORM_LIMIT_BYTES = 4096;
const FORM_FIELD_LIMIT = 16;

export const formBody = express.urlencoded({ extended: false, limit: FORM_LIMIT_BYTES, parameterLimit: FORM_FIELD_LIMIT });

/** The form's fields parsed with `schema`, or a 400 naming each field that is wrong. */
export function parseForm<S extends z.ZodType>(schema: S, req: Request): z.infer<S> {
  const result = schema.safeParse(req.body ?? {});
  if (result.success) return result.data;
  throw new AppError('VALIDATION_ERROR', 'The form has invalid fields', {
    fields: result.error.issues.map((issue) => ({ field: issue.path.join('.') || '(form)', message: issue.message })),
  });
}

/** Body-parser failures (too large, too many fields, bad encoding) as the contract's errors. */
export function fromFormParserError(error: unknown): AppError | null {
  const type = (error as { type?: unknown } | null)?.type;
  switch (type) {
    case 'entity.too.large':
    case 'parameters.too.many':
      return new AppError('PAYLOAD_TOO_LARGE', `Forms are limited to ${FORM_LIMIT_BYTES} bytes and ${FORM_FIELD_LIMIT} fields`, {
        limit: FORM_LIMIT_BYTES,
      });
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send forms as UTF-8 application/x-www-form-urlencoded');
    case 'request.aborted':
    case 'request.size.invalid':
    case 'entity.parse.failed':
      return new AppError('VALIDATION_ERROR', 'The form could not be read');
    default:
      return null;
  }
}
