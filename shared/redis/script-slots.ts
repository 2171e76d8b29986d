/**
 * Where a Lua script fragment finds its keys and arguments. A fragment written against
 * `key(1)…` and `arg(1)…` runs alone at offset 0, or after another fragment in one combined
 * script, its slots shifted past the other's (docs/adr/0016-hot-path.md).
 */
export interface ScriptSlots {
  key: (n: number) => string;
  arg: (n: number) => string;
}

export function scriptSlots(keyOffset = 0, argOffset = 0): ScriptSlots {
  return { key: (n) => `KEYS[${n + keyOffset}]`, arg: (n) => `ARGV[${n + argOffset}]` };
}
