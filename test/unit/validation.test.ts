import type { z } from 'zod';
import { contextRequestSchema, outcomeRequestSchema, profileUpdateSchema, versionsQuerySchema } from '../../api/schemas/request.schemas';
import { parseOrThrow } from '../../api/validation';
import { FRAMINGS, STYLES } from '../../shared/domain/arms';
import { AppError, type ErrorCode, type FieldError } from '../../shared/errors/app-error';

function rejection(schema: z.ZodType, input: unknown, dedicated: Partial<Record<string, ErrorCode>> = {}): AppError {
  try {
    parseOrThrow(schema, input, dedicated);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error('expected parseOrThrow to throw');
}
const fieldsOf = (error: AppError) => (error.details as { fields: FieldError[] }).fields;

const context = { userId: 'user-1', task: 'Write the report', complexity: 'high' };
const USER_ID = { userId: 'INVALID_USER_ID' } as const;
const REQUEST_ID = { requestId: 'INVALID_REQUEST_ID' } as const;

describe('parseOrThrow with contextRequestSchema', () => {
  it('returns the parsed body when valid', () => {
    const body = { ...context, taskType: 'writing', metadata: { source: 'app' } };
    expect(parseOrThrow(contextRequestSchema, body, USER_ID)).toEqual(body);
  });

  it('lists every bad field, with the allowed values of enums', () => {
    const error = rejection(contextRequestSchema, { userId: 'u', complexity: 'extreme', taskType: 7 }, USER_ID);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.statusCode).toBe(400);
    expect(fieldsOf(error)).toEqual(
      expect.arrayContaining([
        { field: 'task', message: 'is required' },
        { field: 'complexity', message: 'must be one of: low, medium, high', allowed: ['low', 'medium', 'high'] },
        { field: 'taskType', message: 'must be a string' },
      ]),
    );
    expect(fieldsOf(error)).toHaveLength(3);
    expect(error.message).toContain('complexity must be one of');
  });

  it('lists each unknown key as its own field', () => {
    const error = rejection(contextRequestSchema, { ...context, foo: 1, bar: 2 }, USER_ID);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(fieldsOf(error)).toEqual([
      { field: 'foo', message: 'is not a known field' },
      { field: 'bar', message: 'is not a known field' },
    ]);
  });

  it.each([
    ['empty', ''],
    ['too long', 'u'.repeat(257)],
    ['a control character', 'user\u0000one'],
    ['a newline', 'user\none'],
    ['not a string', 42],
    ['missing', undefined],
  ])('answers INVALID_USER_ID for a userId that is %s, even when other fields are bad too', (_label, userId) => {
    const error = rejection(contextRequestSchema, { ...context, userId, complexity: 'nope', extra: true }, USER_ID);
    expect(error.code).toBe('INVALID_USER_ID');
    expect(error.statusCode).toBe(400);
    expect(fieldsOf(error)[0]!.field).toBe('userId');
  });

  it('names a userId with a NUL once: text that cannot be stored is not checked further', () => {
    const error = rejection(contextRequestSchema, { ...context, userId: 'user\u0000one' }, USER_ID);
    expect(fieldsOf(error)).toEqual([{ field: 'userId', message: 'must be valid Unicode text without NUL characters' }]);
  });

  it('accepts a 256-character userId and non-ASCII text', () => {
    expect(parseOrThrow(contextRequestSchema, { ...context, userId: 'ü'.repeat(256) }, USER_ID).userId).toHaveLength(256);
  });

  it('uses VALIDATION_ERROR for a bad userId when no dedicated code is given', () => {
    expect(rejection(contextRequestSchema, { ...context, userId: '' }).code).toBe('VALIDATION_ERROR');
  });

  it('bounds task length and metadata size', () => {
    expect(fieldsOf(rejection(contextRequestSchema, { ...context, task: 't'.repeat(8001) }))[0]!.field).toBe('task');
    expect(fieldsOf(rejection(contextRequestSchema, { ...context, task: '' }))[0]!.field).toBe('task');
    const big = { blob: 'x'.repeat(8 * 1024) };
    expect(fieldsOf(rejection(contextRequestSchema, { ...context, metadata: big }))[0]).toEqual({
      field: 'metadata',
      message: 'must be at most 8 KiB when serialized',
    });
    expect(fieldsOf(rejection(contextRequestSchema, { ...context, metadata: 'x' }))[0]).toEqual({
      field: 'metadata',
      message: 'must be an object',
    });
  });

  it('treats a missing body as an empty object', () => {
    const error = rejection(contextRequestSchema, undefined);
    expect(
      fieldsOf(error)
        .map((f) => f.field)
        .sort(),
    ).toEqual(['task', 'userId']);
  });

  it('takes complexity as optional: absent or null is an unknown complexity', () => {
    const { complexity: _complexity, ...withoutComplexity } = context;
    expect(parseOrThrow(contextRequestSchema, withoutComplexity, USER_ID)).toEqual(withoutComplexity);
    expect(parseOrThrow(contextRequestSchema, { ...context, complexity: null }, USER_ID).complexity).toBeUndefined();
  });

  it('refuses a JSON body that is not an object, null as [1, 2] or "hello", with VALIDATION_ERROR', () => {
    for (const body of [null, [1, 2], 'hello']) {
      const error = rejection(contextRequestSchema, body);
      expect(error.code).toBe('VALIDATION_ERROR');
      expect(fieldsOf(error)).toEqual([{ field: '(body)', message: 'must be an object' }]);
    }
  });
});

describe('null for an optional field', () => {
  it('means absent in a context request (taskType, metadata)', () => {
    expect(parseOrThrow(contextRequestSchema, { ...context, taskType: null, metadata: null }, USER_ID)).toEqual(context);
  });

  it('means absent in an outcome request (every optional signal and metadata)', () => {
    const outcome = { requestId: `req_${'A'.repeat(60)}`, started: true };
    const nulls = { completed: null, timeToStart: null, flowState: null, satisfaction: null, metadata: null };
    expect(parseOrThrow(outcomeRequestSchema, { ...outcome, ...nulls }, REQUEST_ID)).toEqual(outcome);
  });

  it('is still refused for a required field', () => {
    const error = rejection(outcomeRequestSchema, { requestId: `req_${'A'.repeat(60)}`, started: null }, REQUEST_ID);
    expect(fieldsOf(error)).toEqual([{ field: 'started', message: 'must be a boolean' }]);
    expect(fieldsOf(rejection(contextRequestSchema, { ...context, task: null }, USER_ID))).toEqual([
      { field: 'task', message: 'must be a string' },
    ]);
  });
});

describe('parseOrThrow with outcomeRequestSchema', () => {
  const outcome = { requestId: `req_${'A'.repeat(60)}`, started: true };

  it('accepts the documented signals', () => {
    const body = { ...outcome, completed: false, timeToStart: 0, flowState: true, satisfaction: 1, metadata: {} };
    expect(parseOrThrow(outcomeRequestSchema, body, REQUEST_ID)).toEqual(body);
  });

  it('answers INVALID_REQUEST_ID when requestId is missing or not a string', () => {
    for (const requestId of [undefined, 12, null]) {
      const error = rejection(outcomeRequestSchema, { started: true, requestId }, REQUEST_ID);
      expect(error.code).toBe('INVALID_REQUEST_ID');
      expect(fieldsOf(error)[0]!.field).toBe('requestId');
    }
  });

  it.each([
    ['started missing', { requestId: outcome.requestId }, 'started', 'is required'],
    ['started not boolean', { ...outcome, started: 'yes' }, 'started', 'must be a boolean'],
    ['satisfaction above 1', { ...outcome, satisfaction: 1.5 }, 'satisfaction', undefined],
    ['negative timeToStart', { ...outcome, timeToStart: -1 }, 'timeToStart', undefined],
    ['unknown field', { ...outcome, rating: 5 }, 'rating', 'is not a known field'],
  ])('rejects %s as VALIDATION_ERROR on that field', (_label, body, field, message) => {
    const error = rejection(outcomeRequestSchema, body, REQUEST_ID);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(fieldsOf(error)[0]!.field).toBe(field);
    if (message) expect(fieldsOf(error)[0]!.message).toBe(message);
  });
});

describe('parseOrThrow with profileUpdateSchema', () => {
  it('rejects an empty body as VALIDATION_ERROR', () => {
    const error = rejection(profileUpdateSchema, {});
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(fieldsOf(error)).toEqual([{ field: '(body)', message: 'provide at least one field to update' }]);
  });

  it('lists each bad value with the allowed values', () => {
    const error = rejection(profileUpdateSchema, { preferredFraming: 'bogus', communicationStyle: 'loud', encouragementLevel: 'moderate' });
    expect(fieldsOf(error)).toEqual([
      { field: 'preferredFraming', message: `must be one of: ${FRAMINGS.join(', ')}`, allowed: [...FRAMINGS] },
      { field: 'communicationStyle', message: `must be one of: ${STYLES.join(', ')}`, allowed: [...STYLES] },
    ]);
  });

  it('accepts a value to pin and null to unpin', () => {
    expect(parseOrThrow(profileUpdateSchema, { preferredFraming: 'purpose', complexityPreference: null })).toEqual({
      preferredFraming: 'purpose',
      complexityPreference: null,
    });
  });

  it('rejects response-only names and unknown fields', () => {
    const error = rejection(profileUpdateSchema, { suggestedFraming: 'purpose' });
    expect(fieldsOf(error)).toContainEqual({ field: 'suggestedFraming', message: 'is not a known field' });
  });
});

describe('parseOrThrow with versionsQuerySchema', () => {
  it('defaults limit to 20 and coerces query strings', () => {
    expect(parseOrThrow(versionsQuerySchema, {})).toEqual({ limit: 20 });
    expect(parseOrThrow(versionsQuerySchema, { limit: '1' }).limit).toBe(1);
    expect(parseOrThrow(versionsQuerySchema, { limit: '100' }).limit).toBe(100);
  });

  it.each([
    ['0', 'must be an integer from 1 to 100'],
    ['101', 'must be an integer from 1 to 100'],
    ['2.5', 'must be an integer from 1 to 100'],
    ['abc', 'must be an integer from 1 to 100'],
    ['1e1', 'must be an integer from 1 to 100'],
  ])('rejects limit=%s (%s)', (limit, message) => {
    expect(fieldsOf(rejection(versionsQuerySchema, { limit }))).toEqual([{ field: 'limit', message }]);
  });

  it('accepts before as v12 or 12', () => {
    expect(parseOrThrow(versionsQuerySchema, { before: 'v12' }).before).toBe(12);
    expect(parseOrThrow(versionsQuerySchema, { before: '12' }).before).toBe(12);
  });

  it.each(['x12', 'v', 'v1.5', '-3', 'v2147483648'])('rejects before=%s', (before) => {
    expect(fieldsOf(rejection(versionsQuerySchema, { before }))).toEqual([
      { field: 'before', message: 'must be a profileVersion such as v12' },
    ]);
  });

  it('rejects unknown query parameters', () => {
    expect(fieldsOf(rejection(versionsQuerySchema, { offset: '10' }))).toEqual([{ field: 'offset', message: 'is not a known field' }]);
  });
});
