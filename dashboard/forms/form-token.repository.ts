import type { RedisClient } from '../../shared/redis/redis';
import type { RedisKeys } from '../../shared/redis/key-names';

/** What a form token's key holds while its first submission runs. */
const PENDING = 'pending';
/** A token is remembered this long: a reload or a resubmission comes well within it. */
export const FORM_TOKEN_TTL_SECONDS = 86_400;

/** A form token as it is stored: the user who submits the form and a digest of the token with the form's action. */
export interface FormTokenRef {
  userId: string;
  digest: string;
}

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
  async claim(token: FormTokenRef): Promise<boolean> {
    const reply = await this.redis.set(this.keys.dashboardFormToken(token), PENDING, 'EX', FORM_TOKEN_TTL_SECONDS, 'NX');
    return reply === 'OK';
  }

  /** Records where the first submission led; a later one is sent there. */
  async complete(token: FormTokenRef, location: string): Promise<void> {
    await this.redis.set(this.keys.dashboardFormToken(token), `done:${location}`, 'EX', FORM_TOKEN_TTL_SECONDS, 'XX');
  }

  /** Frees a token whose submission was refused, so the same form may be sent again once corrected. */
  async release(token: FormTokenRef): Promise<void> {
    await this.redis.del(this.keys.dashboardFormToken(token));
  }

  /** Where the first submission led; null while it still runs (or when the token is unknown). */
  async outcome(token: FormTokenRef): Promise<string | null> {
    const value = await this.redis.get(this.keys.dashboardFormToken(token));
    return value?.startsWith('done:') ? value.slice('done:'.length) : null;
  }
}
