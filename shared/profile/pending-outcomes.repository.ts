import type { ChainableCommander } from 'ioredis';
import type { RedisKeys } from '../redis/key-names';
import type { Tenant } from '../domain/environment';
import { execEach, type RedisClient } from '../redis/redis';

/**
 * Outcomes accepted by the API and not yet applied by a worker, per user
 * (docs/adr/0008-read-your-outcomes.md). The API marks an outcome when it first accepts it (in
 * the script that claims its requestId); the worker unmarks it once the outcome is applied — or
 * dropped — and the cached profile shows it, and announces the users it settled on a Redis
 * channel. Profile reads wait briefly while a recent mark exists (ProfileLoader), so a client
 * that reports an outcome and asks again gets an answer that has learned from it.
 *
 * A mark is a member of a sorted set per user (keyed by the user hash every requestId
 * carries): requestId → time accepted (ms). Marks older than PENDING_OUTCOME_HORIZON_MS are
 * ignored — an outcome being retried, or no worker running — and the set expires
 * PENDING_OUTCOME_TTL_SECONDS to a minute more after its last mark (its lifetime is renewed
 * about once a minute, includes/claimOutcome.lua).
 */
export const PENDING_OUTCOME_HORIZON_MS = 5_000;
export const PENDING_OUTCOME_TTL_SECONDS = 60;

export class PendingOutcomes {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  /**
   * Unmarks settled outcomes (applied, already applied or dropped; each with its user's hash,
   * as its requestId carries it) and announces their users' mark keys on the settled channel,
   * in one round trip.
   */
  async clear(marks: Iterable<{ tenant: Tenant; userHash: string; requestId: string }>): Promise<void> {
    // One ZREM per user, however many of the user's outcomes the batch settled.
    const byKey = new Map<string, string[]>();
    for (const { tenant, userHash, requestId } of marks) {
      const key = this.keys.pendingOutcomes(tenant, userHash);
      const ids = byKey.get(key);
      if (ids) ids.push(requestId);
      else byKey.set(key, [requestId]);
    }
    if (byKey.size === 0) return;
    const commands: Array<(pipeline: ChainableCommander) => void> = [];
    for (const [key, ids] of byKey) commands.push((pipeline) => pipeline.zrem(key, ...ids));
    commands.push((pipeline) => pipeline.publish(this.keys.outcomesSettled, JSON.stringify([...byKey.keys()])));
    await execEach(this.redis, commands);
  }
}

/**
 * The API side of the settled channel: resolves the waits of reads whose user's outcomes a
 * worker has just settled. One subscription per API process; a lost message only makes a
 * read wait until its next re-check.
 */
export class SettledOutcomes {
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(
    private readonly subscriber: RedisClient,
    private readonly keys: RedisKeys,
  ) {
    subscriber.on('message', (channel: string, message: string) => {
      if (channel !== keys.outcomesSettled) return;
      let settled: unknown;
      try {
        settled = JSON.parse(message);
      } catch {
        return;
      }
      if (!Array.isArray(settled)) return;
      for (const key of settled) {
        const waiting = typeof key === 'string' ? this.waiters.get(key) : undefined;
        if (!waiting) continue;
        this.waiters.delete(key as string);
        for (const wake of waiting) wake();
      }
    });
    subscriber.subscribe(keys.outcomesSettled).catch(() => undefined);
  }

  /** The key of a user's marks (what the worker announces). */
  keyOf(tenant: Tenant, userHash: string): string {
    return this.keys.pendingOutcomes(tenant, userHash);
  }

  /**
   * Starts listening for a settlement of `pendingKey`'s outcomes: `wait(ms)` resolves on the
   * first one or after `ms`, whichever comes first. Listen before reading the marks, so a
   * settlement between the read and the wait is not missed; `cancel` when not waiting after all.
   */
  listen(pendingKey: string): { wait: (ms: number) => Promise<void>; cancel: () => void } {
    let wake!: () => void;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    const waiting = this.waiters.get(pendingKey) ?? new Set<() => void>();
    waiting.add(wake);
    this.waiters.set(pendingKey, waiting);
    const cancel = () => {
      waiting.delete(wake);
      if (waiting.size === 0 && this.waiters.get(pendingKey) === waiting) this.waiters.delete(pendingKey);
    };
    return {
      cancel,
      wait: async (ms) => {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([woken, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, ms))))]);
        clearTimeout(timer);
        cancel();
      },
    };
  }

  /** Stops listening; reads still waiting go on at once. */
  close(): void {
    this.subscriber.disconnect();
    for (const waiting of this.waiters.values()) for (const wake of waiting) wake();
    this.waiters.clear();
  }
}
