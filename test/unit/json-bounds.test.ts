import fc from 'fast-check';
import { JSON_PROBLEMS, jsonProblem, type JsonBounds } from '../../api/schemas/json-bounds';

const bounds: JsonBounds = { maxDepth: 8, maxBytes: 8 * 1024 };
const DEPTH = JSON_PROBLEMS.depth(bounds);
const SIZE = JSON_PROBLEMS.size(bounds);
const TEXT = JSON_PROBLEMS.text();

/** An object nested `levels` deep, built without recursion. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let i = 1; i < levels; i++) value = { k: value };
  return value;
}

describe('jsonProblem', () => {
  it('accepts 8 levels of nesting and refuses 9', () => {
    expect(jsonProblem(nested(8), bounds)).toBeNull();
    expect(jsonProblem(nested(9), bounds)).toBe(DEPTH);
    expect(jsonProblem({ list: [[[[[[[[]]]]]]]] }, bounds)).toBe(DEPTH);
  });

  it('refuses 100,000 levels of nesting without overflowing the stack', () => {
    expect(jsonProblem(nested(100_000), bounds)).toBe(DEPTH);
  });

  it('refuses 100,000 keys as too large', () => {
    const wide = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, 0]));
    expect(jsonProblem(wide, bounds)).toBe(SIZE);
  });

  it('stops before reading the elements of an array too long to fit', () => {
    let reads = 0;
    const huge = new Proxy(new Array<number>(1_000_000).fill(0), {
      get(target, property, receiver) {
        if (typeof property === 'string' && /^\d+$/.test(property)) reads++;
        return Reflect.get(target, property, receiver);
      },
    });
    expect(jsonProblem({ huge }, bounds)).toBe(SIZE);
    expect(reads).toBe(0);
  });

  it('measures the size in UTF-8 bytes of the serialized JSON, up to exactly 8 KiB', () => {
    const padding = (bytes: number) => ({ s: 'x'.repeat(bytes - '{"s":""}'.length) });
    expect(Buffer.byteLength(JSON.stringify(padding(8192)))).toBe(8192);
    expect(jsonProblem(padding(8192), bounds)).toBeNull();
    expect(jsonProblem(padding(8193), bounds)).toBe(SIZE);
    // 'é' is 2 bytes in UTF-8, a newline 2 characters escaped.
    expect(jsonProblem({ s: 'é'.repeat(4092) }, bounds)).toBeNull();
    expect(jsonProblem({ s: 'é'.repeat(4093) }, bounds)).toBe(SIZE);
    expect(jsonProblem({ s: '\n'.repeat(4093) }, bounds)).toBe(SIZE);
  });

  it('refuses NUL and unpaired surrogates in strings and keys, at any depth within the bounds', () => {
    expect(jsonProblem({ a: ['x\u0000'] }, bounds)).toBe(TEXT);
    expect(jsonProblem({ a: { '\ud800': 1 } }, bounds)).toBe(TEXT);
    expect(jsonProblem({ a: '\ud83d\ude00' }, bounds)).toBeNull();
  });

  it('agrees with JSON.stringify on the size of any storable JSON value within the depth', () => {
    const storable = fc.string({ unit: 'grapheme' }).filter((s) => !s.includes('\u0000'));
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.constant(null),
        fc.boolean(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.integer(),
        storable,
        fc.array(tie('value'), { maxLength: 40 }),
        fc.dictionary(storable, tie('value'), { maxKeys: 40 }),
      ),
    })).value;
    const seen = { fits: 0, tooLarge: 0 };
    fc.assert(
      fc.property(fc.dictionary(storable, json), (value) => {
        const parsed = JSON.parse(JSON.stringify(value)) as unknown;
        const small = { maxDepth: 100, maxBytes: 2048 };
        const tooLarge = Buffer.byteLength(JSON.stringify(parsed), 'utf8') > small.maxBytes;
        expect(jsonProblem(parsed, small)).toBe(tooLarge ? JSON_PROBLEMS.size(small) : null);
        seen[tooLarge ? 'tooLarge' : 'fits']++;
      }),
      { numRuns: 300, seed: 1 },
    );
    // Both sides of the limit were exercised.
    expect(seen.fits).toBeGreaterThan(10);
    expect(seen.tooLarge).toBeGreaterThan(10);
  });
});
