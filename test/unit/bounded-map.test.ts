import { BoundedMap } from '../../shared/cache/bounded-map';

describe('BoundedMap', () => {
  it('holds at most its capacity, dropping the least recently used entry first', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    expect(map.get('a')).toBe(1); // 'a' is now the most recently used
    map.set('c', 3);
    expect(map.size).toBe(2);
    expect(map.get('b')).toBeUndefined();
    expect(map.get('a')).toBe(1);
    expect(map.get('c')).toBe(3);
  });

  it('counts a replaced entry once and treats it as just used', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    map.set('a', 10);
    map.set('c', 3);
    expect(map.size).toBe(2);
    expect(map.get('a')).toBe(10);
    expect(map.get('b')).toBeUndefined();
  });

  it('computes a missing value once and remembers it', () => {
    const map = new BoundedMap<string, number>(2);
    let made = 0;
    expect(map.getOrSet('a', () => ++made)).toBe(1);
    expect(map.getOrSet('a', () => ++made)).toBe(1);
    expect(made).toBe(1);
  });

  it('refuses a capacity below one', () => {
    expect(() => new BoundedMap(0)).toThrow();
  });
});

describe('BoundedMap eviction (CLOCK)', () => {
  it('keeps every entry read since the last sweep over entries that were not, and a hit does not reorder', () => {
    const map = new BoundedMap<string, number>(3);
    map.set('a', 1);
    map.set('b', 2);
    map.set('c', 3);
    map.get('a');
    map.get('c');
    map.set('d', 4); // b is the one unused entry
    expect([...['a', 'b', 'c', 'd']].map((k) => map.get(k))).toEqual([1, undefined, 3, 4]);
    expect(map.size).toBe(3);
    // All three were just read: the sweep clears their marks and drops the oldest.
    map.set('e', 5);
    expect(map.size).toBe(3);
    expect(map.get('e')).toBe(5);
  });
});
