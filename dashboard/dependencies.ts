import { createHmac } from 'node:crypto';
import type { DashboardConfig } from '../shared/config/config';
import { dummyPasswordHash } from '../shared/dashboard-users/password';
import { createDb, requestPoolSettings } from '../shared/db/database';
import { DependencyWatch } from '../shared/health/dependency-watch';
import type { RedisKeys } from '../shared/redis/key-names';
import { dependencyProbes, probePool, requestProbeTimeout } from '../shared/health/readiness';
import { countryResolver, type CountryCode } from '../shared/geo/country';
import { KeyService } from '../shared/credentials/key.service';
import { KeyLifecycle } from '../shared/credentials/key-lifecycle';
import { publishCredentialChange } from '../shared/credentials/credential-changes.repository';
import type { Logger } from '../shared/logger/logger';
import { createRedis, keysFor, redisTarget, type RedisClient } from '../shared/redis/redis';
import { DeviceCookies } from './auth/device-cookie';
import { SignInThrottle } from './auth/sign-in-throttle';
import { TotpCodes } from './auth/totp';
import { VerificationGate } from './auth/verification-gate';
import { FormTokenRepository } from './forms/form-token.repository';
import { AccountKeys } from './services/account-keys.service';
import { AuditLog } from './services/audit-log.service';
import { FormTokens } from './services/form-tokens.service';
import { Passwords } from './services/passwords.service';
import { Patterns } from './services/patterns.service';
import { SignIns } from './services/sign-in.service';
import { Team } from './services/team.service';
import { TrafficService } from './services/traffic.service';
import { TwoFactor } from './services/two-factor.service';
import { UserSessions } from './services/user-sessions.service';
import { Viewers } from './services/viewers.service';
import { Webhooks } from './services/webhooks.service';
import { SecretBox } from '../shared/webhooks/secret-box';
import { WebhookEndpoints } from '../shared/webhooks/webhook-endpoints.service';

/**
 * What the dashboard's routes use; built below, replaced piecemeal in tests. Routes reach
 * Postgres and Redis only through the services; the Redis client is here for the session store.
 */
export interface DashboardDeps {
  redis: RedisClient;
  redisKeys: RedisKeys;
  /** Who a session belongs to, read on every page. */
  viewers: Viewers;
  /** Sign-ins under the throttle and the verification gate, and their audit entries. */
  signIns: SignIns;
  /** The account's keys as the pages read them. */
  accountKeys: AccountKeys;
  /** Keys created, rotated, revoked and deleted, each announced and audited (as the CLI's). */
  keyLifecycle: KeyLifecycle;
  /** Traffic, usage and countries for the traffic and geography pages. */
  traffic: TrafficService;
  /** Unusual patterns and their acknowledgement. */
  patterns: Patterns;
  audit: AuditLog;
  /** A user's signed-in sessions: listed, ended together, each within its absolute lifetime. */
  userSessions: UserSessions;
  /** A signed-in user's password: confirmed (under a limit of its own) and changed. */
  passwords: Passwords;
  /** Two-factor sign-in: enrolment, the code step of signing in, turning it off, the account's requirement. */
  twoFactor: TwoFactor;
  /** The account's users, invitations by a one-time link, role changes and removals. */
  team: Team;
  /** Webhook endpoints of the account's environments, their delivery logs, test events and redeliveries (each change audited). */
  webhooks: Webhooks;
  /** One-time form tokens: a form sent twice acts once. */
  formTokens: FormTokens;
  /** Remembered devices: each keeps its own sign-in allowance. */
  devices: DeviceCookies;
  logger: Logger;
  /** The client's country (code only) from its address. */
  countryOf: (address: string | undefined) => CountryCode | null;
  session: { secret: string; idleMs: number; maxAgeMs: number; secureCookies: boolean };
  /** `TRUST_PROXY`: the proxies whose X-Forwarded-For names the client. */
  trustProxy: string[] | undefined;
  clock: () => number;
  /** Which dependency is away: told of every 503, it logs each outage once. */
  watch: DependencyWatch;
  /** No page is answered later than this (REQUEST_DEADLINE). */
  requestDeadlineMs: number;
  close(): Promise<void>;
}

/** Postgres connections of the dashboard: a few pages at once. */
const DASHBOARD_POOL_SIZE = 4;

export function buildDashboardDependencies(config: DashboardConfig, logger: Logger, clock: () => number = Date.now): DashboardDeps {
  const db = createDb(config.DATABASE_URL, requestPoolSettings(DASHBOARD_POOL_SIZE, config.REQUEST_DEADLINE));
  const probeTimeoutMs = requestProbeTimeout(config.REQUEST_DEADLINE);
  const probeDb = createDb(config.DATABASE_URL, probePool(probeTimeoutMs));
  // Fails fast while Redis is down or hangs (the page says 503) instead of holding requests.
  const redis = createRedis(redisTarget(config), 'producer', Math.ceil(config.REQUEST_DEADLINE / 2));
  const watch = new DependencyWatch({ probes: dependencyProbes(redis, probeDb, probeTimeoutMs), logger });
  const keys = keysFor(config);
  const resolver = countryResolver();
  // Secrets of their own for signing cookies and sealing TOTP secrets, derived so COS_SECRET itself is used only for keys.
  const derive = (purpose: string) => createHmac('sha256', config.COS_SECRET).update(purpose).digest('base64url');
  // Hashed now, so the first sign-in with an unknown email takes no longer than later ones.
  void dummyPasswordHash();
  const audit = new AuditLog(db);
  const accountKeys = new AccountKeys(db);
  const throttle = new SignInThrottle({ redis, keys, secret: config.COS_SECRET, clock });
  // One gate for every password verified in this process, at sign-in or to confirm a change.
  const verifications = new VerificationGate();
  const userSessions = new UserSessions(db, { idleMs: config.DASHBOARD_SESSION_IDLE, maxAgeMs: config.DASHBOARD_SESSION_MAX_AGE }, clock);
  const passwords = new Passwords({ db, throttle, verifications, sessions: userSessions, audit });
  const totp = new TotpCodes(Buffer.from(derive('dashboard totp secrets'), 'base64url'), clock);
  return {
    redis,
    redisKeys: keys,
    viewers: new Viewers(db, userSessions),
    signIns: new SignIns({ db, throttle, verifications, audit }),
    userSessions,
    passwords,
    twoFactor: new TwoFactor({ db, totp, throttle, passwords, sessions: userSessions, audit }),
    accountKeys,
    keyLifecycle: new KeyLifecycle({
      db,
      keys: new KeyService(db, config.COS_SECRET, 'customer'),
      announce: (change) => publishCredentialChange(redis, keys, change),
    }),
    traffic: new TrafficService(db),
    patterns: new Patterns(db, accountKeys, audit),
    audit,
    team: new Team(db, userSessions, clock),
    // Sealed under the same COS_SECRET as the worker's, which opens the secrets to sign deliveries.
    webhooks: new Webhooks(db, new WebhookEndpoints({ db, box: new SecretBox(config.COS_SECRET), clock })),
    formTokens: new FormTokens(new FormTokenRepository(redis, keys), FormTokens.waitWithin(config.REQUEST_DEADLINE)),
    devices: new DeviceCookies(derive('dashboard device cookie'), config.DASHBOARD_SECURE_COOKIES),
    logger,
    countryOf: (address) => resolver.countryOf(address),
    session: {
      secret: derive('dashboard session cookie'),
      idleMs: config.DASHBOARD_SESSION_IDLE,
      maxAgeMs: config.DASHBOARD_SESSION_MAX_AGE,
      secureCookies: config.DASHBOARD_SECURE_COOKIES,
    },
    trustProxy: config.TRUST_PROXY,
    clock,
    watch,
    requestDeadlineMs: config.REQUEST_DEADLINE,
    close: async () => {
      watch.close();
      redis.disconnect();
      await Promise.all([db.destroy(), probeDb.destroy()]);
    },
  };
}
