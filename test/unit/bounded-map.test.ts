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
