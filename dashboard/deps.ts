import type { RedisClient } from '../shared/redis/redis';
import type { RedisKeys } from '../shared/cache/keys';
import type { Db } from '../shared/db/database';
import type { CountryCode } from '../shared/geo/country';
import type { KeyService } from '../shared/keys/key.service';
import type { Logger } from '../shared/logger/logger';
import type { DependencyWatch } from '../shared/health/dependency-watch';
import type { DeviceCookies } from './auth/device-cookie';
import type { SignInThrottle } from './auth/sign-in-throttle';
import type { VerificationGate } from './auth/verification-gate';

/** What the dashboard's routes use; built by dependencies.ts, replaced piecemeal in tests. */
export interface DashboardDeps {
  db: Db;
  redis: RedisClient;
  redisKeys: RedisKeys;
  keyService: KeyService;
  throttle: SignInThrottle;
  /** Remembered devices: each keeps its own sign-in allowance. */
  devices: DeviceCookies;
  /** The cap on password verifications at once. */
  verifications: VerificationGate;
  logger: Logger;
  /** The client's country (code only) from its address. */
  countryOf: (address: string | undefined) => CountryCode | null;
  session: { secret: string; idleMs: number; secureCookies: boolean };
  /** `TRUST_PROXY`: the proxies whose X-Forwarded-For names the client. */
  trustProxy: string[] | undefined;
  clock: () => number;
  /** Which dependency is away: told of every 503, it logs each outage once. */
  watch: DependencyWatch;
  /** No page is answered later than this (REQUEST_DEADLINE). */
  requestDeadlineMs: number;
  close(): Promise<void>;
}
