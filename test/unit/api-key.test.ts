import { createHmac } from 'node:crypto';
import {
  API_KEY_PATTERN,
  KEY_ID_LENGTH,
  generateApiKey,
  hashApiKey,
  hashesEqual,
  lastFour,
  parseApiKey,
} from '../../shared/credentials/api-key';
import { randomBase62 } from '../../shared/util/random-base62';

const SECRET = 'unit-test-secret-0123456789';
const ID_32 = 'aZ09'.repeat(8);

describe('generateApiKey', () => {
  it.each(['test', 'live'] as const)('produces cos_sk_%s_<40 base62> that parseApiKey accepts', (env) => {
    const key = generateApiKey(env);
    expect(KEY_ID_LENGTH).toBe(40);
    expect(key).toMatch(new RegExp(`^cos_sk_${env}_[0-9A-Za-z]{40}$`));
    expect(parseApiKey(key)).toEqual({ environment: env });
  });

  it('never repeats across 1000 draws', () => {
    const keys = new Set(Array.from({ length: 1000 }, () => generateApiKey('test')));
    expect(keys.size).toBe(1000);
  });
});

describe('parseApiKey', () => {
  it('accepts ids of 32 to 128 base62 characters and returns the environment', () => {
    expect(parseApiKey(`cos_sk_live_${ID_32}`)).toEqual({ environment: 'live' });
    expect(parseApiKey(`cos_sk_test_${'x'.repeat(128)}`)).toEqual({ environment: 'test' });
  });

  it.each([
    ['wrong prefix', `cos_pk_live_${ID_32}`],
    ['other vendor prefix', `sk_live_${ID_32}`],
    ['short id (31)', `cos_sk_live_${ID_32.slice(1)}`],
    ['too long id (129)', `cos_sk_live_${'x'.repeat(129)}`],
    ['bad env', `cos_sk_prod_${ID_32}`],
    ['upper-case env', `cos_sk_LIVE_${ID_32}`],
    ['non-base62 (-)', `cos_sk_live_${ID_32.slice(1)}-`],
    ['non-base62 (_)', `cos_sk_live_${ID_32.slice(1)}_`],
    ['trailing newline', `cos_sk_live_${ID_32}\n`],
    ['leading space', ` cos_sk_live_${ID_32}`],
    ['empty', ''],
  ])('rejects %s', (_label, key) => {
    expect(parseApiKey(key)).toBeNull();
    expect(API_KEY_PATTERN.test(key)).toBe(false);
  });
});

describe('hashApiKey', () => {
  const key = `cos_sk_test_${ID_32}`;

  it('is HMAC-SHA-256 of the key under the secret', () => {
    const expected = createHmac('sha256', SECRET).update(key).digest();
    expect(hashApiKey(key, SECRET).equals(expected)).toBe(true);
    expect(hashApiKey(key, SECRET)).toHaveLength(32);
  });

  it('depends on the secret (not a plain hash)', () => {
    expect(hashApiKey(key, SECRET).equals(hashApiKey(key, `${SECRET}-other`))).toBe(false);
  });

  it('differs for different keys and is stable for the same key', () => {
    expect(hashApiKey(key, SECRET).equals(hashApiKey(key, SECRET))).toBe(true);
    expect(hashApiKey(key, SECRET).equals(hashApiKey(`${key}x`, SECRET))).toBe(false);
  });
});

describe('hashesEqual', () => {
  it('is true only for equal buffers, also when lengths differ', () => {
    const a = hashApiKey('a', SECRET);
    expect(hashesEqual(a, Buffer.from(a))).toBe(true);
    expect(hashesEqual(a, hashApiKey('b', SECRET))).toBe(false);
    expect(hashesEqual(a, a.subarray(0, 16))).toBe(false);
    expect(hashesEqual(Buffer.alloc(0), a)).toBe(false);
  });
});

describe('randomBase62', () => {
  it.each([1, 16, 40, 200])('returns exactly %d base62 characters', (length) => {
    expect(randomBase62(length)).toMatch(new RegExp(`^[0-9A-Za-z]{${length}}$`));
  });

  it('uses the whole 62-character alphabet, roughly uniformly', () => {
    const text = randomBase62(62_000);
    const counts = new Map<string, number>();
    for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // expected 1000 each; a modulo bias of 256 % 62 would push the first 8 symbols to ~1250
    for (const count of counts.values()) {
      expect(count).toBeGreaterThan(850);
      expect(count).toBeLessThan(1150);
    }
  });
});

describe('lastFour', () => {
  it('returns the last four characters for display', () => {
    expect(lastFour(`cos_sk_test_${ID_32}`)).toBe(ID_32.slice(-4));
  });
});
