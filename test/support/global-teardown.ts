/** Stops the throwaway Postgres and Redis of global-setup.ts and removes their data. */
export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __COS_TEARDOWN__?: () => Promise<void> }).__COS_TEARDOWN__?.();
}
