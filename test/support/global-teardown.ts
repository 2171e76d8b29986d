import type { LocalServices } from '../../scripts/local-services';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __COS_SERVICES__?: LocalServices }).__COS_SERVICES__?.stop();
}
