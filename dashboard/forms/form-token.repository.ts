import type { RedisClient } from '../../shared/redis/redis';
import type { RedisKeys } from '../../shared/redis/key-names';

/** What a form token's key holds while its first submission runs. */
const PENDING = 'pending';
/** A token is remembered this long: a reload or a resubmission comes well within it. */
export const FORM_TOKEN_TTL_SECONDS = 86_400;

/**
 * One-time form tokens in Redis. A token is claimed with SET NX, so of two submissions of one
 * form only one ever runs; the claim then records where that submission led, for the second.
 */
export class FormTokenRepository {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  /** True for the first claim of this token, false for every later one. */
  async claim(userId: string, digest: string): Promise<boolean> {
    const reply = await this.redis.set(this.keys.dashboardFormToken(userId, digest), PENDING, 'EX', FORM_TOKEN_TTL_SECONDS, 'NX');
    return reply === 'OK';
  }

  /** Records where the first submission led; a later one is sent there. */
  async complete(userId: string, digest: string, location: string): Promise<void> {
    await this.redis.set(this.keys.dashboardFormToken(userId, digest), `done:${location}`, 'EX', FORM_TOKEN_TTL_SECONDS, 'XX');
  }

  /** Frees a token whose submission was refused, so the same form may be sent again once corrected. */
  async release(userId: string, digest: string): Promise<void> {
    await this.redis.del(this.keys.dashboardFormToken(userId, digest));
  }

  /** Where the first submission led; null while it still runs (or when the token is unknown). */
  async outcome(userId: string, digest: string): Promise<string | null> {
    const value = await this.redis.get(this.keys.dashboardFormToken(userId, digest));
    return value?.startsWith('done:') ? value.slice('done:'.length) : null;
  }
}
