/**
 * The V8 flags the API process runs with: `npm run start:api`, `npm start` and the benchmarks
 * start it with them, and `API_PROCESSES` children inherit them (docs/adr/0016-hot-path.md).
 *
 * A larger young generation: a context call's objects live for its few milliseconds, but with
 * V8's default semi-space a busy API scavenges every few dozen milliseconds, copying the calls in
 * flight each time and promoting some of them into the old generation; a 64 MiB semi-space
 * scavenges a fraction as often, for at most 128 MiB more memory.
 *
 * A larger first old generation: what the API keeps (its caches, the decisions it holds before
 * logging them, what a scavenge still promotes) grows the old generation a few MB a second, and
 * V8 starts a heap sized for a small process, so it marked and compacted every 2–3 s under load,
 * each an 8–11 ms pause in the latency tail. Starting it at 256 MiB puts those a minute apart.
 */
export const API_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64', '--initial-old-space-size=256'];

/** The arguments of `node` that start the API at `main` (its compiled entry point). */
export const apiNodeArgs = (main: string): string[] => [...API_NODE_FLAGS, main];
