import { z } from 'zod';
import type { RedisKeys } from '../cache/keys';
import type { RedisClient } from '../redis/redis';

/**
 * Key and account changes announced on Redis by the command that made them in Postgres
 * (docs/adr/0004-credential-cache.md). Every API instance applies them to its credential cache
 * at once — also an instance that cannot reach Postgres, whose poll of the change watermark
 * would see them only when it can again. A message missed (the instance was disconnected from
 * Redis) is covered by that poll.
 */
export const credentialChangeSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('key'), keyId: z.string(), revokedAt: z.iso.datetime().optional(), deletedAt: z.iso.datetime().optional() }),
  z.object({ type: z.literal('account'), accountId: z.string(), restricted: z.boolean() }),
]);
export type CredentialChange = z.infer<typeof credentialChangeSchema>;

export async function publishCredentialChange(redis: RedisClient, keys: RedisKeys, change: CredentialChange): Promise<void> {
  await redis.publish(keys.credentialChanges, JSON.stringify(change));
}

/** The API side: calls `apply` for each well-formed change announced on the channel. */
export class CredentialChanges {
  constructor(
    private readonly subscriber: RedisClient,
    keys: RedisKeys,
    apply: (change: CredentialChange) => void,
  ) {
    subscriber.on('message', (channel: string, message: string) => {
      if (channel !== keys.credentialChanges) return;
      let parsed;
      try {
        parsed = credentialChangeSchema.safeParse(JSON.parse(message));
      } catch {
        return;
      }
      if (parsed.success) apply(parsed.data);
    });
    subscriber.subscribe(keys.credentialChanges).catch(() => undefined);
  }

  close(): void {
    this.subscriber.disconnect();
  }
}
