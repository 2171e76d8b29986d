import { randomUUID } from 'node:crypto';
import { keyDigest, requestFingerprint } from '../../api/services/idempotent-posts';
import { IdempotencyRecords } from '../../shared/idempotency/idempotency.repository';
import { ProfileCache } from '../../shared/profile/profile-cache.repository';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';

/**
 * Idempotency-Key on the POSTs, against the real app, Redis and Postgres: replay, the two 409s,
 * the lease of a request in flight, scoping, erasure and the window.
 */
let h: Harness;
let key: string;
const WINDOW_MS = 1500;
const DEADLINE_MS = 1000;
beforeAll(async () => {
  h = await startHarness({ IDEMPOTENCY_WINDOW: `${WINDOW_MS / 1000}s`, REQUEST_DEADLINE: `${DEADLINE_MS / 1000}s` });
  key = await h.key('idem-acme');
});
afterAll(() => h.close());

const context = (apiKey: string, body: object, idempotencyKey?: string) =>
  h
    .http()
    .post('/v1/context')
    .set({ ...bearer(apiKey), ...(idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey }) })
    .send(body);
const outcome = (apiKey: string, body: object, idempotencyKey?: string) =>
  h
    .http()
    .post('/v1/outcome')
    .set({ ...bearer(apiKey), ...(idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey }) })
    .send(body);
const acme = async () => ({
  accountId: (await h.env.db.selectFrom('accounts').select('id').where('name', '=', 'idem-acme').executeTakeFirstOrThrow()).id,
  environment: 'test' as const,
});

/** Every idempotency record and index of this file's prefix. */
const stored = () => h.env.keysMatching(`${h.env.prefix}:*idem*`);

describe('POST /v1/context with an Idempotency-Key', () => {
  it('replays the first response to the same key and body, marked Idempotent-Replayed', async () => {
    const body = { userId: 'idem-u1', task: 'Write the report', complexity: 'high', metadata: { a: 1, b: { c: 2, d: [1, 2] } } };
    const idem = randomUUID();
    const first = await context(key, body, idem).expect(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    // The same request with its keys in another order (and an explicit null for an absent field) is the same request.
    const reordered = {
      metadata: { b: { d: [1, 2], c: 2 }, a: 1 },
      taskType: null,
      complexity: 'high',
      task: 'Write the report',
      userId: 'idem-u1',
    };
    const again = await context(key, reordered, idem).expect(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(again.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    // Without a key, the same body is a new decision.
    const fresh = await context(key, body).expect(200);
    expect(fresh.body.requestId).not.toBe(first.body.requestId);
  });

  it('answers 409 IDEMPOTENCY_KEY_REUSED to the same key with another body, and runs nothing', async () => {
    const idem = randomUUID();
    const first = await context(key, { userId: 'idem-u2', task: 'Plan' }, idem).expect(200);
    const other = await context(key, { userId: 'idem-u2', task: 'Plan the week' }, idem).expect(409);
    expect(other.body.error).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', statusCode: 409 });
    // The key still replays its own request.
    expect((await context(key, { userId: 'idem-u2', task: 'Plan' }, idem).expect(200)).body).toEqual(first.body);
  });

  it('answers 409 IDEMPOTENCY_KEY_IN_USE while the first request holds the key, and frees it within the deadline', async () => {
    const body = { userId: 'idem-u3', task: 'Call the bank' };
    const idem = randomUUID();
    // A request in flight, as a process that took the lease and then died would leave it.
    const tenant = await acme();
    const records = new IdempotencyRecords(h.env.redis, h.env.keys);
    const userHash = h.deps.context.user(tenant, body.userId).hash;
    const record = { tenant, userHash, keyDigest: keyDigest(idem) };
    const claim = records.prepareClaim(record, {
      token: 'crashed',
      fingerprint: requestFingerprint('context', body),
      leaseMs: DEADLINE_MS,
      windowMs: WINDOW_MS,
      now: Date.now(),
    });
    // Taken as a context call takes it: with the user's first profile read.
    const cache = new ProfileCache(h.env.redis, h.env.keys);
    const at = { profileKey: h.env.keys.profile(tenant, body.userId), pendingKey: h.env.keys.pendingOutcomes(tenant, userHash) };
    await cache.sendFresh(cache.prepareFresh(at, 0, null, claim));
    expect(claim.acquired).toBe(true);
    const busy = await context(key, body, idem).expect(409);
    expect(busy.body.error).toMatchObject({ code: 'IDEMPOTENCY_KEY_IN_USE', statusCode: 409 });
    expect(busy.headers['retry-after']).toBe('1');
    // Another body is told the key is someone else's, in flight or not.
    expect((await context(key, { ...body, task: 'Other' }, idem).expect(409)).body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    const freed = Date.now();
    await eventually(async () => (await context(key, body, idem)).status === 200, 5000, 50);
    expect(Date.now() - freed).toBeLessThanOrEqual(DEADLINE_MS + 500);
  });

  it('lets concurrent requests with one key make one decision: the others wait (409 in use) or replay it', async () => {
    const body = { userId: 'idem-u4', task: 'Tidy the desk' };
    const idem = randomUUID();
    const answers = await Promise.all(Array.from({ length: 6 }, () => context(key, body, idem)));
    const ok = answers.filter((a) => a.status === 200);
    for (const a of answers) expect([200, 409]).toContain(a.status);
    for (const a of answers.filter((x) => x.status === 409)) {
      expect(a.body.error.code).toBe('IDEMPOTENCY_KEY_IN_USE');
      expect(a.headers['retry-after']).toBe('1');
    }
    expect(new Set(ok.map((a) => a.body.requestId)).size).toBe(1);
    const settled = await context(key, body, idem).expect(200);
    expect(settled.headers['idempotent-replayed']).toBe('true');
    expect(settled.body.requestId).toBe(ok[0]!.body.requestId);
  });

  it('scopes keys to the account and environment, and replays across a key rotation', async () => {
    const body = { userId: 'idem-u5', task: 'Stretch' };
    const idem = randomUUID();
    const first = await context(key, body, idem).expect(200);
    const otherAccount = await h.key('idem-other');
    const elsewhere = await context(otherAccount, body, idem).expect(200);
    expect(elsewhere.headers['idempotent-replayed']).toBeUndefined();
    expect(elsewhere.body.requestId).not.toBe(first.body.requestId);
    // Another environment of the same account: another scope.
    const live = await h.key('idem-acme', 'live');
    const inLive = await context(live, body, idem).expect(200);
    expect(inLive.headers['idempotent-replayed']).toBeUndefined();
    // A key of the same account and environment, made by rotating another: the same scope.
    const issued = await h.keys.create({ account: 'idem-acme', environment: 'test' });
    const rotated = await h.keys.rotate(issued.id);
    const replay = await context(rotated.key, body, idem).expect(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
  });

  it('passes a replay through the rate limit: a live replay carries its headers and is metered', async () => {
    const live = await h.key('idem-live', 'live');
    const body = { userId: 'idem-u8', task: 'Draft' };
    const idem = randomUUID();
    const first = await context(live, body, idem).expect(200);
    const replay = await context(live, body, idem).expect(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(Number(replay.headers['x-ratelimit-remaining'])).toBeLessThan(Number(first.headers['x-ratelimit-remaining']));
  });

  it('refuses a malformed key with 400 VALIDATION_ERROR naming the header', async () => {
    for (const bad of ['x'.repeat(256), 'é']) {
      const res = await h
        .http()
        .post('/v1/context')
        .set(bearer(key))
        .set('Idempotency-Key', Buffer.from(bad, 'latin1').toString('latin1'))
        .send({ userId: 'idem-u6', task: 'T' })
        .expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.fields[0].field).toBe('Idempotency-Key');
    }
  });

  it('forgets a response after the window', async () => {
    const idem = randomUUID();
    await context(key, { userId: 'idem-u7', task: 'A' }, idem).expect(200);
    await context(key, { userId: 'idem-u7', task: 'B' }, idem).expect(409);
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS + 200));
    const later = await context(key, { userId: 'idem-u7', task: 'B' }, idem).expect(200);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
  });
});

describe('POST /v1/outcome with an Idempotency-Key', () => {
  it('replays 202, answers IDEMPOTENCY_KEY_REUSED before OUTCOME_CONFLICT, and stores no error', async () => {
    const decision = await context(key, { userId: 'idem-o1', task: 'Run' }).expect(200);
    const signals = { requestId: decision.body.requestId, started: true, completed: true };
    const idem = randomUUID();
    const first = await outcome(key, signals, idem).expect(202);
    const replay = await outcome(key, signals, idem).expect(202);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    const conflicting = { ...signals, completed: false };
    expect((await outcome(key, conflicting, idem).expect(409)).body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    const otherKey = randomUUID();
    expect((await outcome(key, conflicting, otherKey).expect(409)).body.error.code).toBe('OUTCOME_CONFLICT');
    // The conflict was not stored: the key answers it again, not "in use".
    expect((await outcome(key, conflicting, otherKey).expect(409)).body.error.code).toBe('OUTCOME_CONFLICT');
  });
});

describe('storing responses', () => {
  it("stores a turn's responses together on one node, each only where its lease still holds", async () => {
    const tenant = await acme();
    const records = new IdempotencyRecords(h.env.redis, h.env.keys);
    const cache = new ProfileCache(h.env.redis, h.env.keys);
    const held = await Promise.all(
      ['idem-b1', 'idem-b2', 'idem-b3'].map(async (userId) => {
        const userHash = h.deps.context.user(tenant, userId).hash;
        const claim = records.prepareClaim(
          { tenant, userHash, keyDigest: keyDigest(randomUUID()) },
          { token: randomUUID(), fingerprint: 'f', leaseMs: DEADLINE_MS, windowMs: WINDOW_MS, now: Date.now() },
        );
        const at = { profileKey: h.env.keys.profile(tenant, userId), pendingKey: h.env.keys.pendingOutcomes(tenant, userHash) };
        await cache.sendFresh(cache.prepareFresh(at, 0, null, claim));
        return claim;
      }),
    );
    // The second request's lease is gone (its user was erased meanwhile): its response is not stored.
    await h.env.redis.del(held[1]!.keys[0]);
    const send = h.env.redis.cosIdempotencyComplete.bind(h.env.redis);
    let calls = 0;
    h.env.redis.cosIdempotencyComplete = ((...args: Parameters<typeof send>) => {
      calls++;
      return send(...args);
    }) as typeof send;
    try {
      const stored = await Promise.all(
        held.map((claim, i) => records.complete(claim, { fingerprint: 'f', status: 200, responseText: `{"n":${i}}`, windowMs: WINDOW_MS })),
      );
      expect(stored).toEqual([true, false, true]);
    } finally {
      h.env.redis.cosIdempotencyComplete = send;
    }
    expect(calls).toBe(h.env.keys.cluster ? 3 : 1);
    expect(JSON.parse((await h.env.redis.get(held[0]!.keys[0]))!)).toEqual({ fingerprint: 'f', status: 200, response: { n: 0 } });
    expect(await h.env.redis.get(held[1]!.keys[0])).toBeNull();
    expect(await h.env.redis.pttl(held[2]!.keys[0])).toBeGreaterThan(DEADLINE_MS);
  });
});

describe('erasure', () => {
  it("removes the user's idempotency records: a re-post after DELETE runs again and answers 202, never 409", async () => {
    const user = 'idem-erased';
    const idem = randomUUID();
    const decision = await context(key, { userId: user, task: 'Read' }, idem).expect(200);
    const outcomeKey = randomUUID();
    const signals = { requestId: decision.body.requestId, started: true };
    await outcome(key, signals, outcomeKey).expect(202);
    const before = await stored();
    expect(before.length).toBeGreaterThan(0);
    await h.http().delete(`/v1/profile/${user}`).set(bearer(key)).expect(204);
    const userHash = h.deps.context.user(await acme(), user).hash;
    expect((await stored()).filter((name) => name.includes(userHash))).toEqual([]);
    // Other signals for the same requestId, with the same key: neither key reuse nor an outcome conflict.
    const after = await outcome(key, { ...signals, started: false }, outcomeKey).expect(202);
    expect(after.headers['idempotent-replayed']).toBeUndefined();
    const again = await context(key, { userId: user, task: 'Read' }, idem).expect(200);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(again.body.requestId).not.toBe(decision.body.requestId);
  });
});

describe('when Redis is unreachable', () => {
  it('answers a keyed POST 503 with Retry-After, never 500, and stores nothing', async () => {
    const { freePort } = await import('../../scripts/local-services');
    const down = await startHarness({ REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    try {
      const apiKey = await down.key('idem-down');
      const res = await down
        .http()
        .post('/v1/context')
        .set({ ...bearer(apiKey), 'Idempotency-Key': randomUUID() })
        .send({ userId: 'idem-down-u', task: 'T' });
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(res.headers['retry-after']).toBeDefined();
    } finally {
      await down.close();
    }
  });
});
