import fc from 'fast-check';
import { COMPLEXITY_HANDLING, ENCOURAGEMENT, FRAMINGS, STYLES, TASK_COMPLEXITY } from '../../shared/domain/arms';

/** Arbitraries for fuzzing the HTTP API: hostile text, JSON values, raw bodies, paths. */

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit));
const control = fc
  .integer({ min: 0, max: 0x9f })
  .filter((c) => c < 0x20 || c >= 0x7f)
  .map((c) => String.fromCharCode(c));
const codePoint = fc.string({ unit: 'binary', minLength: 1, maxLength: 1 });

/** Text with any code point, control characters, NUL and unpaired surrogates. */
export const hostileText = (maxLength = 40) =>
  fc.string({
    unit: fc.oneof({ weight: 6, arbitrary: codePoint }, { weight: 1, arbitrary: control }, { weight: 1, arbitrary: loneSurrogate }),
    maxLength,
  });

/** Any JSON value, its strings hostile. */
export const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom(Number.MAX_SAFE_INTEGER, -Number.MAX_VALUE, Number.MAX_VALUE, Number.MIN_VALUE, -0),
    hostileText(),
    fc.array(tie('value'), { maxLength: 6 }),
    fc.dictionary(hostileText(8), tie('value'), { maxKeys: 6 }),
  ),
})).value;

/** Arrays or objects nested up to `maxDepth` deep, as JSON text (by default too deep for JSON.stringify). */
export const deepJson = (maxDepth = 20_000) =>
  fc
    .record({ depth: fc.integer({ min: 1, max: maxDepth }), array: fc.boolean() })
    .map(({ depth, array }) => (array ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}0${'}'.repeat(depth)}`));

/** Number literals JSON.parse reads as Infinity, -0, or beyond double precision. */
export const hugeNumber = fc.oneof(
  fc.constantFrom('1e400', '-1e400', '1e-400', '-0', '0.1e1', '123456789012345678901234567890'),
  fc.bigInt().map(String),
);

/** A field's value: mostly a plausible one, else anything. */
const either = <T>(plausible: fc.Arbitrary<T>) =>
  fc.oneof(
    { weight: 8, arbitrary: plausible },
    { weight: 1, arbitrary: jsonValue },
    { weight: 1, arbitrary: hugeNumber.map((text) => ({ rawNumber: text })) },
  );

/** Text that is mostly acceptable, sometimes hostile. */
const someText = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }) },
  { weight: 1, arbitrary: hostileText() },
);

type Fields = Record<string, fc.Arbitrary<unknown>>;
const someOf = (fields: Fields) =>
  fc.record(Object.fromEntries(Object.entries(fields).map(([name, value]) => [name, either(value)])), { requiredKeys: [] });
const allOf = (fields: Fields) => fc.record(Object.fromEntries(Object.entries(fields).map(([name, value]) => [name, either(value)])));

/**
 * An object with the `required` fields mostly all present, some of the `optional` ones (each
 * mostly plausible), and now and then an unknown one.
 */
const bodyOf = (required: Fields, optional: Fields) =>
  fc
    .tuple(
      fc.oneof({ weight: 8, arbitrary: allOf(required) }, { weight: 1, arbitrary: someOf(required) }),
      someOf(optional),
      fc.oneof({ weight: 7, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.tuple(hostileText(8), jsonValue) }),
    )
    .map(([body, more, extra]) => ({ ...body, ...more, ...(extra ? { [extra[0]]: extra[1] } : {}) }));

/** JSON text of a body; a `{rawNumber}` value is written as that number literal. */
function toJsonText(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && 'rawNumber' in v ? `\u0000raw:${String((v as { rawNumber: string }).rawNumber)}\u0000` : v,
  ).replace(/"\\u0000raw:([^"\\]*)\\u0000"/g, '$1');
}

/** A request body as sent: JSON of a body, of any value, deep nesting, or arbitrary text. */
export const rawBody = (plausible: fc.Arbitrary<unknown>) =>
  fc.oneof(
    { weight: 5, arbitrary: plausible.map(toJsonText) },
    { weight: 2, arbitrary: jsonValue.map(toJsonText) },
    { weight: 1, arbitrary: deepJson() },
    { weight: 1, arbitrary: deepJson().map((deep) => `{"userId":"u","task":"t","metadata":${deep}}`) },
    { weight: 1, arbitrary: hostileText(200) },
  );

const nullable = <T>(value: fc.Arbitrary<T>) => fc.oneof(value, fc.constant(null));
const metadata = fc.oneof(
  fc.dictionary(hostileText(8), jsonValue),
  deepJson(30).map((text) => JSON.parse(text) as unknown),
);

export const contextBody = bodyOf(
  { userId: someText, task: someText },
  { complexity: nullable(fc.constantFrom(...TASK_COMPLEXITY)), taskType: nullable(someText), metadata: nullable(metadata) },
);

export const outcomeBody = (requestIds: string[]) =>
  bodyOf(
    {
      requestId: fc.oneof(fc.constantFrom(...requestIds), fc.stringMatching(/^req_[A-Za-z0-9_-]{40,200}$/)),
      started: fc.boolean(),
    },
    {
      completed: nullable(fc.boolean()),
      timeToStart: nullable(fc.double({ min: 0, max: 1e6, noNaN: true })),
      flowState: nullable(fc.boolean()),
      satisfaction: nullable(fc.double({ min: 0, max: 1, noNaN: true })),
      metadata: nullable(metadata),
    },
  );

const pin = <T extends string>(values: readonly T[]) => nullable(fc.constantFrom(...values));
const readOnly = bodyOf(
  {},
  {
    userId: someText,
    pinned: fc.array(fc.constantFrom('preferredFraming', 'communicationStyle', 'nonsense')),
    profilePhase: fc.constantFrom('cold_start', 'learning', 'established'),
    interactionCount: fc.integer(),
    lastUpdated: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
    profileVersion: fc.stringMatching(/^v\d{1,4}$/),
  },
);

/** Pins, now and then with a profile's read-only fields. */
export const profileBody = fc
  .tuple(
    bodyOf(
      {},
      {
        preferredFraming: pin(FRAMINGS),
        communicationStyle: pin(STYLES),
        complexityPreference: pin(COMPLEXITY_HANDLING),
        encouragementLevel: pin(ENCOURAGEMENT),
      },
    ),
    fc.option(readOnly, { freq: 2 }),
  )
  .map(([pins, fields]) => ({ ...fields, ...pins }));

/** A path segment: a well-formed string percent-encoded, or percent-encoded bytes (maybe not UTF-8). */
export const pathSegment = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 300 }).map(encodeURIComponent),
  fc.uint8Array({ maxLength: 40 }).map((bytes) => Array.from(bytes, (b) => `%${b.toString(16).padStart(2, '0')}`).join('')),
  fc.stringMatching(/^[A-Za-z0-9._~-]{0,20}$/),
  fc.constantFrom('%', '%ZZ', '%E2%82', '..', '%2F', '%00'),
);

/** A query string: a valid one, or arbitrary percent-encoded keys and values. */
const arbitraryQuery = fc
  .array(fc.tuple(fc.oneof(fc.constantFrom('limit', 'before'), hostileText(6)), fc.oneof(hugeNumber, hostileText(12))), { maxLength: 3 })
  .map((pairs) =>
    pairs
      .map(([k, v]) => `${encodeURIComponent(k.replace(/[\ud800-\udfff]/g, ''))}=${encodeURIComponent(v.replace(/[\ud800-\udfff]/g, ''))}`)
      .join('&'),
  );
export const queryString = fc.oneof(fc.constantFrom('', 'limit=5', 'before=v3', 'limit=100&before=2'), arbitraryQuery);

/** Content types a client might send with a body. */
export const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'application/json; charset=latin1',
      'application/merge-patch+json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
    ),
  },
);

export const METHODS = ['get', 'post', 'put', 'delete', 'patch', 'head', 'options'] as const;
export type Method = (typeof METHODS)[number];
