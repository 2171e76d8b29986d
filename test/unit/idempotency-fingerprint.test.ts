import { canonicalJson, keyDigest, requestFingerprint } from '../../api/services/idempotent-posts';

describe('the identity of an idempotent request', () => {
  it('sorts object keys at every level and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: 'x' } })).toBe('{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}');
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
  });

  it('leaves out absent fields, as the validated request has none', () => {
    expect(canonicalJson({ a: 1, b: undefined })).toBe(canonicalJson({ a: 1 }));
  });

  it('differs by operation and by any value, and is a fixed-size digest', () => {
    const body = { userId: 'u', task: 't' };
    expect(requestFingerprint('context', body)).toBe(requestFingerprint('context', { task: 't', userId: 'u' }));
    expect(requestFingerprint('context', body)).not.toBe(requestFingerprint('outcome', body));
    expect(requestFingerprint('context', body)).not.toBe(requestFingerprint('context', { ...body, task: 'T' }));
    expect(requestFingerprint('context', body)).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(keyDigest('k'.repeat(255))).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('escapes keys and strings as JSON does', () => {
    expect(canonicalJson({ 'a"b': 'c\nd' })).toBe('{"a\\"b":"c\\nd"}');
  });
});
