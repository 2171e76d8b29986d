import { sql } from 'kysely';
import { findAccount, setRestricted } from '../../shared/accounts/account.repository';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const profileGet = (key?: string, header?: string) => {
  const req = h.http().get('/v1/profile/someone');
  if (header !== undefined) return req.set('Authorization', header);
  return key ? req.set(bearer(key)) : req;
};

describe('authentication', () => {
  it.each([
    ['no Authorization header', undefined, 'Missing API key: send Authorization: Bearer <key>'],
    ['an empty Authorization header', '', 'Authorization header is empty: send Authorization: Bearer <key>'],
    ['the Basic scheme', 'Basic dXNlcjpwYXNz', 'Authorization must use the Bearer scheme: Authorization: Bearer <key>'],
    ['another scheme without credentials', 'Token', 'Authorization must use the Bearer scheme: Authorization: Bearer <key>'],
    [
      'a bare key without Bearer',
      `cos_sk_test_${'A'.repeat(40)}`,
      'Authorization must use the Bearer scheme: send Authorization: Bearer <key>, not the key alone',
    ],
    ['Bearer without a key', 'Bearer', 'Authorization: Bearer has no key: send Authorization: Bearer <key>'],
    ['Bearer followed by two words', 'Bearer one two', 'Authorization: Bearer must be followed by exactly one key'],
    ['a key not in the key format', 'Bearer not-a-key', 'API key is not in the cos_sk_<test|live>_<id> format'],
    ['a key of another environment name', `Bearer cos_sk_prod_${'A'.repeat(40)}`, 'API key is not in the cos_sk_<test|live>_<id> format'],
    ['an unknown well-formed key', `Bearer cos_sk_test_${'A'.repeat(40)}`, 'Invalid API key'],
  ])('says what is wrong with %s, as a 401 with WWW-Authenticate', async (_label, header, message) => {
    const res = await profileGet(undefined, header);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      error: { code: 'UNAUTHORIZED', message, statusCode: 401, traceId: res.headers['x-request-id'], docUrl: '/docs#error-unauthorized' },
    });
    expect(res.headers['www-authenticate']).toBe('Bearer realm="cos"');
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  it('accepts the scheme name in any case', async () => {
    const key = await h.key('auth-scheme-case', 'test');
    const res = await profileGet(undefined, `bEaReR ${key}`);
    expect(res.status).toBe(404);
  });

  it('accepts a valid key and records lastUsedAt without a synchronous write', async () => {
    const issued = await h.keys.create({ account: 'auth-ok', environment: 'test' });
    const res = await profileGet(issued.key);
    expect(res.status).toBe(404); // authenticated: the user simply does not exist
    expect(res.body.error.code).toBe('USER_NOT_FOUND');
    await eventually(async () => {
      const row = await h.env.db.selectFrom('api_keys').select('last_used_at').where('id', '=', issued.id).executeTakeFirst();
      return row?.last_used_at;
    }, 15_000);
  });

  it('stores only a keyed hash and the last four characters of a key', async () => {
    const issued = await h.keys.create({ account: 'auth-storage', environment: 'live' });
    const row = await h.env.db.selectFrom('api_keys').selectAll().where('id', '=', issued.id).executeTakeFirstOrThrow();
    expect(row.last4).toBe(issued.key.slice(-4));
    expect(JSON.stringify(row)).not.toContain(issued.key);
    expect(Buffer.from(row.key_hash).length).toBe(32);
  });

  it('refuses a revoked key within 2 seconds', async () => {
    const issued = await h.keys.create({ account: 'auth-revoke', environment: 'test' });
    expect((await profileGet(issued.key)).status).toBe(404);
    await h.keys.revoke(issued.id);
    const started = Date.now();
    await eventually(async () => (await profileGet(issued.key)).status === 401, 2500, 50);
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('refuses a deleted key within 2 seconds', async () => {
    const issued = await h.keys.create({ account: 'auth-delete', environment: 'test' });
    expect((await profileGet(issued.key)).status).toBe(404);
    await h.keys.delete(issued.id);
    await eventually(async () => (await profileGet(issued.key)).status === 401, 2500, 50);
  });

  it('keeps a rotated key working during the grace period and refuses it after', async () => {
    const issued = await h.keys.create({ account: 'auth-rotate', environment: 'test' });
    const rotated = await h.keys.rotate(issued.id, 1500);
    expect(rotated.key).not.toBe(issued.key);
    expect((await profileGet(issued.key)).status).toBe(404);
    expect((await profileGet(rotated.key)).status).toBe(404);
    await eventually(async () => (await profileGet(issued.key)).status === 401, 5000, 100);
    expect((await profileGet(rotated.key)).status).toBe(404);
  });

  it('refuses an expired key', async () => {
    const issued = await h.keys.create({ account: 'auth-expired', environment: 'test' });
    await h.env.db
      .updateTable('api_keys')
      .set({ expires_at: sql`now() - interval '1 second'`, updated_at: sql`now()` })
      .where('id', '=', issued.id)
      .execute();
    await eventually(async () => (await profileGet(issued.key)).status === 401, 2500, 50);
  });

  it('answers 403 FORBIDDEN when the key lacks the scope', async () => {
    const key = await h.key('auth-scopes', 'test', ['context']);
    const res = await profileGet(key);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
    const outcome = await h.http().post('/v1/outcome').set(bearer(key)).send({ requestId: 'req_x', started: true });
    expect(outcome.status).toBe(403);
    const context = await h.http().post('/v1/context').set(bearer(key)).send({ userId: 'u', task: 't', complexity: 'low' });
    expect(context.status).toBe(200);
  });

  it('answers 403 ACCOUNT_RESTRICTED for a restricted account within 2 seconds, and serves it again when lifted', async () => {
    const key = await h.key('auth-restricted', 'test');
    expect((await profileGet(key)).status).toBe(404);
    const account = (await findAccount(h.env.db, 'auth-restricted'))!;
    await setRestricted(h.env.db, account.id, true);
    const res = await eventually(
      async () => {
        const r = await profileGet(key);
        return r.status === 403 ? r : null;
      },
      2500,
      50,
    );
    expect(res.body.error.code).toBe('ACCOUNT_RESTRICTED');
    await setRestricted(h.env.db, account.id, false);
    await eventually(async () => (await profileGet(key)).status === 404, 2500, 50);
  });

  it('checks auth before the body: a bad key with a malformed body is 401, not 400', async () => {
    const res = await h.http().post('/v1/context').set('Authorization', 'Bearer nope').set('Content-Type', 'application/json').send('{bad');
    expect(res.status).toBe(401);
  });
});

describe('SERVE_ENVIRONMENTS', () => {
  let liveOnly: Harness;
  beforeAll(async () => {
    liveOnly = await startHarness({ SERVE_ENVIRONMENTS: 'live' });
  });
  afterAll(() => liveOnly.close());

  it('refuses keys of an environment the deployment does not serve with 401', async () => {
    const testKey = await liveOnly.key('env-split', 'test');
    const liveKey = await liveOnly.key('env-split', 'live');
    const asTest = await liveOnly.http().get('/v1/profile/u').set(bearer(testKey));
    expect(asTest.status).toBe(401);
    expect((await liveOnly.http().get('/v1/profile/u').set(bearer(liveKey))).status).toBe(404);
  });
});
