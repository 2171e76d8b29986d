/**
 * A Node built-in module, or undefined where there is none (browsers, edge runtimes). Loaded
 * when first needed, not imported: the package also runs there, and bundlers for those runtimes
 * leave a require they cannot resolve statically alone.
 */
export function nodeBuiltin<T>(id: `node:${string}`): T | undefined {
  try {
    const load = typeof require === 'function' ? require : undefined;
    return load?.(id) as T | undefined;
  } catch {
    return undefined;
  }
}
