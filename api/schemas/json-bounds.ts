/** Limits on a JSON value supplied by a client (request `metadata`). */
export interface JsonBounds {
  /** Objects and arrays nested at most this deep; the value itself is level 1. */
  maxDepth: number;
  /** Bytes of its compact UTF-8 JSON serialization (as JSON.stringify writes it). */
  maxBytes: number;
}

export const JSON_PROBLEMS = {
  depth: (bounds: JsonBounds) => `must be nested at most ${bounds.maxDepth} levels deep`,
  size: (bounds: JsonBounds) => `must be at most ${bounds.maxBytes / 1024} KiB when serialized`,
  text: () => 'must contain only valid Unicode text without NUL characters',
};

declare global {
  interface String {
    /** ES2024, in Node since 20; the ES2022 library this project compiles against lacks it. */
    isWellFormed(): boolean;
  }
}

/** Text Postgres can store and that means one thing: no NUL, no unpaired surrogate. */
export const isStorableText = (value: string): boolean => !value.includes('\u0000') && value.isWellFormed();

/** Bytes of a string as a JSON string literal; stops early (returning more than `budget`) when it cannot fit. */
function stringBytes(value: string, budget: number): number {
  // Every UTF-16 unit takes at least one byte, plus the two quotes.
  if (value.length + 2 > budget) return budget + 1;
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}

/**
 * The first way `value` (parsed JSON) breaks `bounds` or holds text that cannot be stored, or
 * null when it has none. It walks the value with an explicit stack — a recursive walk (or
 * JSON.stringify) overflows the call stack on a few thousand levels — and stops at the first
 * problem: it never descends below maxDepth, and every value it visits adds at least one byte
 * to the serialized size, so its work is bounded by the limits, not by the input.
 */
export function jsonProblem(value: unknown, bounds: JsonBounds): string | null {
  const values: unknown[] = [value];
  const depths: number[] = [1];
  let bytes = 0;
  while (values.length > 0) {
    const item = values.pop();
    const depth = depths.pop()!;
    if (typeof item === 'string') {
      if (!isStorableText(item)) return JSON_PROBLEMS.text();
      bytes += stringBytes(item, bounds.maxBytes - bytes);
    } else if (Array.isArray(item)) {
      if (depth > bounds.maxDepth) return JSON_PROBLEMS.depth(bounds);
      bytes += 2 + Math.max(0, item.length - 1);
      if (bytes > bounds.maxBytes) return JSON_PROBLEMS.size(bounds);
      for (let i = item.length - 1; i >= 0; i--) {
        values.push(item[i]);
        depths.push(depth + 1);
      }
    } else if (item !== null && typeof item === 'object') {
      if (depth > bounds.maxDepth) return JSON_PROBLEMS.depth(bounds);
      const keys = Object.keys(item);
      // Braces, commas between members and a colon per member.
      bytes += 2 + Math.max(0, keys.length - 1) + keys.length;
      for (const key of keys) {
        if (bytes > bounds.maxBytes) return JSON_PROBLEMS.size(bounds);
        if (!isStorableText(key)) return JSON_PROBLEMS.text();
        bytes += stringBytes(key, bounds.maxBytes - bytes);
        values.push((item as Record<string, unknown>)[key]);
        depths.push(depth + 1);
      }
    } else {
      // A number, boolean or null.
      bytes += String(item).length;
    }
    if (bytes > bounds.maxBytes) return JSON_PROBLEMS.size(bounds);
  }
  return null;
}
