/**
 * The V8 flags each service process runs with: `npm run start:api` / `start:worker`, `npm
 * start`, the Dockerfile's compose services and the benchmarks start them with these, and
 * `API_PROCESSES` children inherit the API's (docs/adr/0016-hot-path.md).
 *
 * A larger young generation, for both: an API call's objects live for its few milliseconds and a
 * worker batch's for the batch, but with V8's default semi-space a busy process scavenges every
 * few dozen milliseconds, copying what is in flight each time and promoting some of it into the
 * old generation; a 64 MiB semi-space scavenges a fraction as often, for at most 128 MiB more
 * memory.
 *
 * A larger first old generation, for the API: what it keeps (its caches, the decisions it holds
 * before logging them, what a scavenge still promotes) grows the old generation a few MB a
 * second, and V8 starts a heap sized for a small process, so it marked and compacted every 2–3 s
 * under load, each an 8–11 ms pause in the latency tail. Starting it at 256 MiB puts those a
 * minute apart.
 */
export const NODE_FLAGS = {
  api: ['--max-semi-space-size=64', '--initial-old-space-size=256'],
  worker: ['--max-semi-space-size=64'],
} as const satisfies Record<string, readonly string[]>;

export type ServiceProcess = keyof typeof NODE_FLAGS;

/** The arguments of `node` that start `role` at `main` (its compiled entry point). */
export const nodeArgs = (role: ServiceProcess, main: string): string[] => [...NODE_FLAGS[role], main];
