import { createHmac, randomBytes } from 'node:crypto';
import type { Result } from 'ioredis';
import type { RedisClient } from '../../shared/redis/redis';
import { defineScripts } from '../../shared/redis/scripts';
import type { RedisKeys } from '../../shared/redis/key-names';

export const SIGN_IN_FAILURE_LIMIT = 5;
export const SIGN_IN_WINDOW_MS = 15 * 60_000;

/**
 * Reserves one attempt in every set of its keys, or in none (shared/redis/lua/reserveSignIn.lua):
 * one set for a device, two for an email and a client address, so the caller passes the key
 * count first. Replies 0 when reserved, else the ms until the fullest set lets an attempt in.
 */
declare module 'ioredis' {
  interface RedisCommander<Context> {
    cosReserveSignIn(numberOfKeys: number, ...keysThenArgs: (string | number)[]): Result<number, Context>;
  }
}

/** Who an attempt is counted against: a device that signed in as the email before, or the email and the client address. */
export type SignInSubject = { device: string } | { email: string; client: string | undefined };

/** A reserved attempt: released when the password was right, kept as a failure when it was not. */
export interface Reservation {
  keys: string[];
  member: string;
}

export type ReserveResult = { reserved: Reservation } | { retryAfterSeconds: number };

export interface SignInThrottleDeps {
  redis: RedisClient;
  keys: RedisKeys;
  /** Keys the hashes that emails, addresses and devices are stored as. */
  secret: string;
  /** Places the attempts in the window (injected in tests); Date.now by default. */
  clock?: () => number;
}

/**
 * Sign-in attempts, counted over a sliding 15-minute window in Redis sorted sets: at most 5 per
 * email and per client address, or — for a browser holding a device cookie of that email
 * (docs/adr/0017-sign-in-throttle.md) — 5 for that device alone, so failures from elsewhere never
 * lock it out. An attempt reserves its place in every set atomically before the password is
 * verified, so simultaneous attempts cannot exceed the limit; a right password releases its
 * place, a wrong one leaves it as the failure. Emails, addresses and devices are stored only as
 * keyed hashes.
 */
export class SignInThrottle {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly secret: string;
  private readonly clock: () => number;

  constructor(deps: SignInThrottleDeps) {
    ({ redis: this.redis, keys: this.keys, secret: this.secret, clock: this.clock = Date.now } = deps);
    defineScripts(this.redis, ['cosReserveSignIn']);
  }

  private hash(text: string): string {
    return createHmac('sha256', this.secret).update(text).digest('base64url').slice(0, 32);
  }

  private setsOf(subject: SignInSubject): string[] {
    if ('device' in subject) return [this.keys.signInFailures('device', this.hash(subject.device))];
    return [
      this.keys.signInFailures('email', this.hash(subject.email)),
      this.keys.signInFailures('client', this.hash(subject.client ?? 'unknown')),
    ];
  }

  /** Reserves an attempt for `subject`, or says how many seconds until one is allowed. */
  reserve(subject: SignInSubject): Promise<ReserveResult> {
    return this.reserveIn(this.setsOf(subject));
  }

  /**
   * Reserves one of a user's attempts at a two-factor code (`code`) or at confirming their
   * password while signed in (`password`): the same atomic script and window, one set per user
   * and kind, so guesses at a code cannot outrun the limit however many arrive at once.
   */
  reserveForUser(kind: 'code' | 'password', userId: string): Promise<ReserveResult> {
    return this.reserveIn([this.keys.signInFailures(kind, this.hash(`${kind}:${userId}`))]);
  }

  private async reserveIn(keys: string[]): Promise<ReserveResult> {
    const now = this.clock();
    const member = `${now}:${randomBytes(6).toString('hex')}`;
    const wait = await this.redis.cosReserveSignIn(keys.length, ...keys, now, SIGN_IN_WINDOW_MS, SIGN_IN_FAILURE_LIMIT, member);
    if (wait > 0) return { retryAfterSeconds: Math.ceil(wait / 1000) };
    return { reserved: { keys, member } };
  }

  /**
   * Claims the audit entry of a refused attempt on `userId` for the window: true for the first
   * refusal, then false until the window has passed since it. A flood of refused attempts then
   * writes one entry per user per 15 minutes, not one each.
   */
  async claimRefusalEntry(userId: string): Promise<boolean> {
    const key = this.keys.signInRefusalAudited(this.hash(userId));
    return (await this.redis.set(key, '1', 'PX', SIGN_IN_WINDOW_MS, 'NX')) === 'OK';
  }

  /** Gives a claim back when its entry could not be written, so the next refusal tries again. */
  async releaseRefusalEntry(userId: string): Promise<void> {
    await this.redis.del(this.keys.signInRefusalAudited(this.hash(userId)));
  }

  /** Gives a reservation back: the attempt succeeded, or was never verified. */
  async release(reservation: Reservation): Promise<void> {
    const pipeline = this.redis.multi();
    for (const key of reservation.keys) pipeline.zrem(key, reservation.member);
    await pipeline.exec();
  }
}
