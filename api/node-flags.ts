/**
 * The V8 flags the API process runs with: `npm run start:api`, `npm start` and the benchmarks
 * start it with them, and `API_PROCESSES` children inherit them (docs/adr/0016-hot-path.md).
 *
 * A larger young generation: a context call's objects live for its few milliseconds, but with
 * V8's default semi-space a busy API scavenges every few dozen milliseconds, copying the calls in
 * flight each time and promoting some of them into the old generation; a 64 MiB semi-space
 * scavenges a fraction as often, for at most 128 MiB more memory.
 */
export const API_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];

/** The arguments of `node` that start the API at `main` (its compiled entry point). */
export const apiNodeArgs = (main: string): string[] => [...API_NODE_FLAGS, main];
