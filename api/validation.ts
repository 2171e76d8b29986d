import type { z } from 'zod';
import { AppError, type ErrorCode, type FieldError } from '../shared/errors/app-error';

const EXPECTED: Record<string, string> = { record: 'an object', object: 'an object', array: 'an array', int: 'an integer' };

/** Field errors of a zod failure, with the allowed values of enum fields. */
export function fieldErrors(error: z.ZodError): FieldError[] {
  return error.issues.flatMap((issue): FieldError[] => {
    const prefix = issue.path.length > 0 ? `${issue.path.join('.')}.` : '';
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ field: `${prefix}${key}`, message: 'is not a known field' }));
    }
    const field = issue.path.length > 0 ? issue.path.join('.') : '(body)';
    const allowed = issue.code === 'invalid_value' ? issue.values.map(String) : undefined;
    let message = issue.message;
    if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) message = 'is required';
    else if (issue.code === 'invalid_type') message = `must be ${EXPECTED[issue.expected] ?? `a ${issue.expected}`}`;
    else if (allowed) message = `must be one of: ${allowed.join(', ')}`;
    return [allowed ? { field, message, allowed } : { field, message }];
  });
}

/**
 * Parses input with a schema. A failure on a field with its own error code (userId,
 * requestId) is reported with that code; anything else is a VALIDATION_ERROR. A request
 * without a body is read as `{}` (so a missing userId gets its own code); a JSON body that is
 * not an object — `null` included — is a VALIDATION_ERROR, "(body) must be an object".
 */
export function parseOrThrow<S extends z.ZodType>(
  schema: S,
  input: unknown,
  dedicated: Partial<Record<string, ErrorCode>> = {},
): z.infer<S> {
  const result = schema.safeParse(input === undefined ? {} : input);
  if (result.success) return result.data;
  const fields = fieldErrors(result.error);
  for (const [field, code] of Object.entries(dedicated)) {
    const failure = fields.find((f) => f.field === field);
    // The dedicated code names the first problem; details still list every field.
    if (failure && code)
      throw new AppError(code, `${field} ${failure.message}`, { fields: [failure, ...fields.filter((f) => f !== failure)] });
  }
  const summary = fields.map((f) => `${f.field} ${f.message}`).join('; ');
  throw new AppError('VALIDATION_ERROR', `Invalid request: ${summary}`, { fields });
}
