import { createHmac, randomBytes } from 'node:crypto';
import type { RedisClient } from '../../shared/redis/redis';
import type { RedisKeys } from '../../shared/cache/keys';
import { execPipeline } from '../../shared/redis/redis';

export const SIGN_IN_FAILURE_LIMIT = 5;
export const SIGN_IN_WINDOW_MS = 15 * 60_000;

/**
 * Failed sign-ins, counted per email and per client address over a sliding 15-minute window
 * (a Redis sorted set of failure times each). Once either has 5, further attempts are refused —
 * also ones with the right password, so guessing cannot go on. Emails and addresses are stored
 * only as keyed hashes.
 */
export class SignInThrottle {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
    private readonly secret: string,
    private readonly clock: () => number = Date.now,
  ) {}

  private subjects(email: string, client: string | undefined): string[] {
    const hash = (text: string) => createHmac('sha256', this.secret).update(text).digest('base64url').slice(0, 32);
    return [this.keys.signInFailures('email', hash(email)), this.keys.signInFailures('client', hash(client ?? 'unknown'))];
  }

  /** Seconds until an attempt is allowed again, or 0 when it is allowed now. */
  async retryAfterSeconds(email: string, client: string | undefined): Promise<number> {
    const now = this.clock();
    const pipeline = this.redis.multi();
    for (const key of this.subjects(email, client)) {
      pipeline.zremrangebyscore(key, 0, now - SIGN_IN_WINDOW_MS);
      pipeline.zcard(key);
      // The failure whose expiry lets the next attempt in: the limit-th newest.
      pipeline.zrevrange(key, SIGN_IN_FAILURE_LIMIT - 1, SIGN_IN_FAILURE_LIMIT - 1, 'WITHSCORES');
    }
    const replies = await execPipeline(pipeline);
    let wait = 0;
    for (let i = 0; i < replies.length; i += 3) {
      const count = replies[i + 1] as number;
      const oldest = (replies[i + 2] as string[])[1];
      if (count >= SIGN_IN_FAILURE_LIMIT && oldest !== undefined) wait = Math.max(wait, Number(oldest) + SIGN_IN_WINDOW_MS - now);
    }
    return Math.ceil(wait / 1000);
  }

  async recordFailure(email: string, client: string | undefined): Promise<void> {
    const now = this.clock();
    const pipeline = this.redis.multi();
    for (const key of this.subjects(email, client)) {
      pipeline.zadd(key, now, `${now}:${randomBytes(6).toString('hex')}`);
      pipeline.pexpire(key, SIGN_IN_WINDOW_MS);
    }
    await execPipeline(pipeline);
  }

  /** A successful sign-in forgets the email's failures (not the client's). */
  async clearEmail(email: string): Promise<void> {
    await this.redis.del(this.subjects(email, undefined)[0]!);
  }
}
