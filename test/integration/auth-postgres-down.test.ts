import { CredentialCache, FOLLOWED_GRACE_MS, STALE_GRACE_MS } from '../../api/auth/credential-cache';
import { createDb, DB_ROLES } from '../../shared/db/database';
import { hashApiKey } from '../../shared/credentials/api-key';
import { createLogger } from '../../shared/logger/logger';
import { TEST_SECRET } from '../support/test-env';
import { findAccount } from '../../shared/accounts/account.repository';
import { runCliCaptured } from '../support/cli';
import { startCountingProxy, type CountingProxy } from '../support/counting-proxy';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';

/**
 * Authentication while the API cannot reach Postgres (its connections go through a proxy that
 * cuts them; the CLI and the test reach Postgres directly), on an injectable clock.
 */
let proxy: CountingProxy;
let h: Harness;
let now: number | null = null;
beforeAll(async () => {
  proxy = await startCountingProxy(process.env.COS_TEST_ADMIN_URL!);
  h = await startHarness((env) => ({ DATABASE_URL: proxy.via(env.databaseUrl) }), { clock: () => now ?? Date.now() });
});
afterEach(async () => {
  await proxy.resume();
  now = null;
});
afterAll(async () => {
  await h.close();
  await proxy.close();
});

/** A request that needs nothing but authentication: 400 once authenticated (the requestId is malformed). */
const authenticated = (key: string) => h.http().post('/v1/outcome').set(bearer(key)).send({ requestId: 'not-a-request-id', started: true });

/** Keys created, and the API's cache made to see the change watermark they moved, so it does not drop what it caches next. */
async function keys(account: string, n: number) {
  const issued = [];
  for (let i = 0; i < n; i++) issued.push(await h.keys.create({ account, environment: 'test' }));
  await h.deps.credentials.poll();
  return issued;
}

describe('Postgres unreachable at authentication', () => {
  it('answers a key not seen lately 503 "Key store unavailable" with Retry-After', async () => {
    const [unseen] = await keys('pg-down-unseen', 1);
    await proxy.interrupt();
    const res = await authenticated(unseen!.key);
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      error: {
        code: 'SERVICE_UNAVAILABLE',
        message: 'Key store unavailable, retry shortly',
        statusCode: 503,
        traceId: res.headers['x-request-id'],
        docUrl: '/docs#error-service_unavailable',
      },
    });
    expect(res.headers['retry-after']).toBe('1');
  });

  it('keeps honouring a key loaded from Postgres within the last 24 h while it follows the key-change stream, and not a moment longer', async () => {
    const [seen] = await keys('pg-down-grace', 1);
    const loadedAt = Date.now();
    now = loadedAt;
    expect((await authenticated(seen!.key)).status).toBe(400);
    await proxy.interrupt();
    // Long past the 10 minutes of an instance that does not follow the stream: a read of it has
    // returned at this hour, so every revocation made meanwhile would have reached the cache.
    now = loadedAt + FOLLOWED_GRACE_MS - 1;
    await eventually(async () => h.deps.credentials.following(now!));
    expect((await authenticated(seen!.key)).status).toBe(400);
    now = loadedAt + FOLLOWED_GRACE_MS;
    await eventually(async () => h.deps.credentials.following(now!));
    const expired = await authenticated(seen!.key);
    expect(expired.status).toBe(503);
    expect(expired.body.error.message).toBe('Key store unavailable, retry shortly');
    await proxy.resume();
    expect((await authenticated(seen!.key)).status).toBe(400);
  });

  it('keeps honouring a key for 10 minutes only when the watermark moved since it was confirmed, stream followed or not', async () => {
    const [seen] = await keys('pg-down-unconfirmed', 1);
    const loadedAt = Date.now();
    now = loadedAt;
    expect((await authenticated(seen!.key)).status).toBe(400);
    // A change made without an announcement (in SQL, or while Redis was away) moves the
    // watermark: the entry may be stale, whatever the stream says.
    await h.keys.create({ account: 'pg-down-unconfirmed-other', environment: 'test' });
    await h.deps.credentials.poll();
    await proxy.interrupt();
    now = loadedAt + STALE_GRACE_MS - 1;
    await eventually(async () => h.deps.credentials.following(now!));
    expect((await authenticated(seen!.key)).status).toBe(400);
    now = loadedAt + STALE_GRACE_MS;
    await eventually(async () => h.deps.credentials.following(now!));
    expect((await authenticated(seen!.key)).status).toBe(503);
  });

  it('keeps honouring a key for 10 minutes only when it cannot follow the key-change stream', async () => {
    // A cache that reads no stream: what an instance whose reads of it stopped returning has.
    let clock = Date.now();
    const unfollowed = createDb(proxy.via(h.env.databaseUrl), { ...DB_ROLES.tool, poolSize: 1 });
    const cache = new CredentialCache({ db: unfollowed, logger: createLogger('silent', 'test'), refreshMs: 60_000, clock: () => clock });
    try {
      const [seen] = await keys('pg-down-unfollowed', 1);
      const hash = hashApiKey(seen!.key, TEST_SECRET);
      const lookup = () => cache.lookup(hash.toString('hex'), hash);
      const loadedAt = clock;
      expect(await lookup()).toMatchObject({ id: seen!.id });
      await proxy.interrupt();
      cache.followed(loadedAt); // followed once, long ago
      clock = loadedAt + STALE_GRACE_MS - 1; // long past the 60 s an entry is trusted without asking Postgres
      expect(await lookup()).toMatchObject({ id: seen!.id });
      clock = loadedAt + STALE_GRACE_MS;
      await expect(lookup()).rejects.toThrow();
    } finally {
      await proxy.resume();
      await unfollowed.destroy();
    }
  });

  it('keeps honouring a cached key when a key created elsewhere moved the watermark just before the outage', async () => {
    const [seen] = await keys('pg-down-moved', 1);
    expect((await authenticated(seen!.key)).status).toBe(400);
    await h.keys.create({ account: 'pg-down-moved-other', environment: 'test' });
    await h.deps.credentials.poll(); // sees the watermark move: every key is to be asked for again
    await proxy.interrupt();
    expect((await authenticated(seen!.key)).status).toBe(400);
    await proxy.resume();
    expect((await authenticated(seen!.key)).status).toBe(400);
  });
});

describe('key changes made with the CLI while this API cannot reach Postgres', () => {
  // The CLI writes Postgres (which the API cannot read) and announces the change on the key-change stream.
  const cli = (...argv: string[]) => runCliCaptured(argv, h.env.processEnv());

  it('refuses a revoked key within 2 s, and a deleted one', async () => {
    const [revoked, deleted, other] = await keys('pg-down-revoke', 3);
    for (const key of [revoked!, deleted!, other!]) expect((await authenticated(key.key)).status).toBe(400);
    await proxy.interrupt();
    expect((await cli('keys', 'revoke', revoked!.id)).code).toBe(0);
    expect((await cli('keys', 'delete', deleted!.id)).code).toBe(0);
    await eventually(async () => (await authenticated(revoked!.key)).status === 401, 2000, 50);
    await eventually(async () => (await authenticated(deleted!.key)).status === 401, 2000, 50);
    expect((await authenticated(other!.key)).status).toBe(400);
  });

  it('refuses the keys of a restricted account with 403 within 2 s, and serves them again once lifted', async () => {
    const [key] = await keys('pg-down-restrict', 1);
    expect((await authenticated(key!.key)).status).toBe(400);
    await proxy.interrupt();
    const account = (await findAccount(h.env.db, 'pg-down-restrict'))!;
    expect((await cli('accounts', 'restrict', account.name)).code).toBe(0);
    const refused = await eventually(
      async () => {
        const res = await authenticated(key!.key);
        return res.status === 403 ? res : null;
      },
      2000,
      50,
    );
    expect(refused.body.error.code).toBe('ACCOUNT_RESTRICTED');
    expect((await cli('accounts', 'unrestrict', account.name)).code).toBe(0);
    await eventually(async () => (await authenticated(key!.key)).status === 400, 2000, 50);
  });

  it('refuses to revoke while the CLI cannot reach Postgres either: nothing changes, exit 1, and the key keeps working', async () => {
    const [key] = await keys('pg-down-cli-too', 1);
    expect((await authenticated(key!.key)).status).toBe(400);
    await proxy.interrupt();
    const result = await runCliCaptured(['keys', 'revoke', key!.id], h.env.processEnv({ DATABASE_URL: proxy.via(h.env.databaseUrl) }));
    expect(result.code).toBe(1);
    expect(result.err).toMatch(
      /^cos keys revoke: Postgres or Redis did not answer \(.+\); the command did not complete: run it again once it answers\n$/,
    );
    await proxy.resume();
    const row = await h.env.db.selectFrom('api_keys').select('revoked_at').where('id', '=', key!.id).executeTakeFirstOrThrow();
    expect(row.revoked_at).toBeNull();
    expect((await authenticated(key!.key)).status).toBe(400);
  });

  it('says so, and still revokes in Postgres, when Redis cannot be reached', async () => {
    const [key] = await keys('pg-down-no-redis', 1);
    const result = await runCliCaptured(['keys', 'revoke', key!.id], h.env.processEnv({ REDIS_URL: 'redis://127.0.0.1:1' }));
    expect(result.code).toBe(0);
    expect(result.err).toMatch(/warning: could not announce the change on Redis/);
    const row = await h.env.db.selectFrom('api_keys').select('revoked_at').where('id', '=', key!.id).executeTakeFirstOrThrow();
    expect(row.revoked_at).not.toBeNull();
  });
});
