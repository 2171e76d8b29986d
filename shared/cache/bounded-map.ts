interface Slot<V> {
  value: V;
  /** Read since it was last passed over by eviction. */
  used: boolean;
}

/**
 * A Map with a size bound that evicts by CLOCK ("second chance"), the usual approximation of
 * least-recently-used: the in-process caches' one eviction rule. Entries sit in insertion order;
 * a read only marks its entry used. To make room, eviction walks from the oldest entry: a used
 * one is moved to the end with its mark cleared, the first unused one is dropped. So an entry
 * read since the last sweep outlives every entry that was not, and a hit costs one Map lookup
 * instead of the delete and re-insert that exact LRU order needs on every read.
 */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, Slot<V>>();

  constructor(readonly capacity: number) {
    if (!(capacity > 0)) throw new Error('a BoundedMap needs a positive capacity');
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    const slot = this.entries.get(key);
    if (slot === undefined) return undefined;
    slot.used = true;
    return slot.value;
  }

  /** The value of `key`, computed by `make` and remembered when absent. */
  getOrSet(key: K, make: () => V): V {
    let value = this.get(key);
    if (value === undefined) {
      value = make();
      this.set(key, value);
    }
    return value;
  }

  /** Stores `value`; a replaced entry counts as just used. */
  set(key: K, value: V): void {
    const slot = this.entries.get(key);
    if (slot !== undefined) {
      slot.value = value;
      slot.used = true;
      return;
    }
    if (this.entries.size >= this.capacity) this.evictOne();
    this.entries.set(key, { value, used: false });
  }

  private evictOne(): void {
    for (const [key, slot] of this.entries) {
      this.entries.delete(key);
      if (!slot.used) return;
      slot.used = false;
      this.entries.set(key, slot);
    }
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
