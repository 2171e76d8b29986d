import { CredentialChanges, publishCredentialChange, type CredentialChange } from '../../shared/credentials/credential-changes.repository';
import { createRedis } from '../../shared/redis/redis';
import { eventually } from '../support/harness';
import { startRedisProxy, type RedisProxy } from '../support/redis-proxy';
import { createTestEnv, type TestEnv } from '../support/test-env';

/**
 * The key-change stream as an API instance reads it: every entry applied once, in order, across
 * a connection that hangs; and entries trimmed while the instance could not read are noticed.
 */
let env: TestEnv;
let proxy: RedisProxy;
let changes: CredentialChanges | undefined;
beforeAll(async () => {
  env = await createTestEnv();
  proxy = await startRedisProxy(env);
});
afterAll(async () => {
  changes?.close();
  proxy.release();
  await proxy.close();
  await env.close();
});

const revoked = (keyId: string): CredentialChange => ({ type: 'key', keyId, revokedAt: new Date().toISOString() });

it('applies what was announced while its read hung, and notices entries trimmed before it read them', async () => {
  const applied: string[] = [];
  let followed = 0;
  let missed = 0;
  changes = new CredentialChanges({
    reader: createRedis(proxy.target, 'consumer'),
    keys: env.keys,
    listener: {
      apply: (change) => void applied.push(change.type === 'key' ? change.keyId : change.accountId),
      followed: () => void followed++,
      missed: () => void missed++,
    },
  });
  await eventually(async () => followed > 0);
  proxy.reset();
  await publishCredentialChange(env.redis, env.keys, revoked('key_1'));
  await eventually(async () => applied.length === 1);
  // Its next blocking read has passed the proxy (so it waits in Redis) before Redis is held from it.
  await eventually(async () => proxy.commands().filter((command) => /^xread$/i.test(command)).length >= 1, 10_000, 10);
  await new Promise((resolve) => setTimeout(resolve, 50));

  // Redis hangs for this reader; meanwhile three more changes are announced and the stream is
  // trimmed to the last. The read already waiting in Redis was answered with key_2 (that answer
  // is held too); key_3 is gone before the reader could ask for it.
  proxy.hold();
  const heldAt = Date.now();
  for (const keyId of ['key_2', 'key_3', 'key_4']) await publishCredentialChange(env.redis, env.keys, revoked(keyId));
  await env.redis.xtrim(env.keys.credentialChanges, 'MAXLEN', 1);
  // Long enough for the held read to count as held up (three times its 1 s block).
  await eventually(async () => Date.now() - heldAt > 3_500, 10_000, 100);
  expect(missed).toBe(0);
  proxy.release();
  await eventually(async () => missed === 1, 10_000);
  expect(applied).toEqual(['key_1', 'key_2', 'key_4']);
}, 30_000);
