import { STATE_FORMAT } from '../../shared/domain/engine/state';
import { createLogger } from '../../shared/logger/logger';
import { capture } from '../support/cli';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';
import { expectMatchesOpenApi } from '../support/openapi';

let h: Harness;
let key: string;
/** What the API logs at warn and above. */
const apiLog = capture();
beforeAll(async () => {
  h = await startHarness({}, { logger: createLogger('warn', 'api-under-test', apiLog.stream) });
  key = await h.key('profiles', 'test');
  h.startWorker();
});
afterAll(() => h.close());

const get = (userId: string, k = key) =>
  h
    .http()
    .get(`/v1/profile/${encodeURIComponent(userId)}`)
    .set(bearer(k));
const put = (userId: string, body: unknown, k = key) =>
  h
    .http()
    .put(`/v1/profile/${encodeURIComponent(userId)}`)
    .set(bearer(k))
    .send(body as object);
const context = (userId: string, complexity = 'high', k = key) =>
  h.http().post('/v1/context').set(bearer(k)).send({ userId, task: 'Tidy the desk', complexity });

describe('GET /v1/profile/:userId', () => {
  it('answers 404 USER_NOT_FOUND for an unknown user', async () => {
    const res = await get('nobody');
    expect(res.status).toBe(404);
    expectMatchesOpenApi(res);
    expect(res.body.error.code).toBe('USER_NOT_FOUND');
  });

  it('answers 400 INVALID_USER_ID for a userId over 256 characters', async () => {
    const res = await get('x'.repeat(257));
    expect(res.status).toBe(400);
    expectMatchesOpenApi(res);
    expect(res.body.error.code).toBe('INVALID_USER_ID');
  });

  it('returns the full profile object', async () => {
    await context('p-shape');
    const res = await get('p-shape');
    expect(res.status).toBe(200);
    expectMatchesOpenApi(res);
    expect(res.body).toEqual({
      userId: 'p-shape',
      preferredFraming: expect.any(String),
      communicationStyle: expect.any(String),
      complexityPreference: expect.any(String),
      encouragementLevel: expect.any(String),
      pinned: [],
      profilePhase: 'cold_start',
      interactionCount: 0,
      lastUpdated: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      profileVersion: 'v0',
    });
  });

  it('handles userIds with slashes, spaces and unicode', async () => {
    const userId = 'team/α user';
    await put(userId, { preferredFraming: 'purpose' });
    const res = await get(userId);
    expect(res.status).toBe(200);
    expectMatchesOpenApi(res);
    expect(res.body.userId).toBe(userId);
  });
});

describe('PUT /v1/profile/:userId', () => {
  it('writes an unreadable stored state back fresh with the new pins, and logs it without the user id', async () => {
    const userId = 'p-state-corrupted';
    expect((await put(userId, { preferredFraming: 'purpose' })).status).toBe(200);
    // A state no engine version wrote (a bug or a bad manual edit).
    await h.env.db
      .updateTable('profiles')
      .set({ state: JSON.stringify({ learner: STATE_FORMAT, history: 'lost' }) as never })
      .where('user_id', '=', userId)
      .execute();
    const res = await put(userId, { encouragementLevel: 'minimal' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ preferredFraming: 'purpose', encouragementLevel: 'minimal', profileVersion: 'v2' });
    const row = await h.env.db.selectFrom('profiles').select('state').where('user_id', '=', userId).executeTakeFirstOrThrow();
    expect(row.state).toMatchObject({ learner: STATE_FORMAT, outcomes: 0 });
    const warnings = apiLog
      .text()
      .split('\n')
      .filter((line) => line.includes('learner state was unreadable'))
      .map((line) => JSON.parse(line));
    expect(warnings).toEqual([expect.objectContaining({ level: 40, userHash: expect.stringMatching(/^[0-9a-f]{16,}$/) })]);
    expect(warnings[0].issue).toMatch(/^outcomes: /);
    expect(apiLog.text()).not.toContain(userId);
  });

  it('creates the profile when missing, pins the dimension and bumps the version', async () => {
    const res = await put('p-pin', { preferredFraming: 'micro_steps', encouragementLevel: 'minimal' });
    expect(res.status).toBe(200);
    expectMatchesOpenApi(res);
    expect(res.body).toMatchObject({
      userId: 'p-pin',
      preferredFraming: 'micro_steps',
      encouragementLevel: 'minimal',
      pinned: ['preferredFraming', 'encouragementLevel'],
      profileVersion: 'v1',
    });
  });

  it('makes /v1/context return pinned values every time, with selection probability 1', async () => {
    await put('p-pinned-context', {
      preferredFraming: 'challenge',
      communicationStyle: 'playful',
      complexityPreference: 'whole',
      encouragementLevel: 'enthusiastic',
    });
    for (let i = 0; i < 5; i++) {
      const res = await context('p-pinned-context');
      expect(res.body).toMatchObject({
        suggestedFraming: 'challenge',
        communicationStyle: 'playful',
        complexity: 'whole',
        encouragement: 'enthusiastic',
      });
      expect(res.body.metadata.explorationMode).toBe(false);
      expect(res.body.rationale).toMatch(/pinned/);
    }
  });

  it('does not bump the version for a no-op change', async () => {
    const first = await put('p-noop', { communicationStyle: 'warm' });
    const again = await put('p-noop', { communicationStyle: 'warm' });
    expect(again.status).toBe(200);
    expect(again.body.profileVersion).toBe(first.body.profileVersion);
    const unpinNothing = await put('p-noop', { preferredFraming: null });
    expect(unpinNothing.body.profileVersion).toBe(first.body.profileVersion);
  });

  it('unpins with null and records a manual version with the changed fields', async () => {
    await put('p-unpin', { preferredFraming: 'curiosity' });
    const res = await put('p-unpin', { preferredFraming: null });
    expect(res.body.pinned).toEqual([]);
    expect(res.body.profileVersion).toBe('v2');
    const versions = await h.http().get('/v1/profile/p-unpin/versions').set(bearer(key));
    expect(versions.body.data[0]).toMatchObject({ profileVersion: 'v2', cause: 'manual', changed: expect.arrayContaining(['pinned']) });
  });

  it('answers 400 VALIDATION_ERROR listing each bad field with the allowed values', async () => {
    const res = await put('p-bad', { preferredFraming: 'shouting', encouragementLevel: 'max' });
    expect(res.status).toBe(400);
    expectMatchesOpenApi(res);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.fields).toEqual([
      {
        field: 'preferredFraming',
        message: expect.any(String),
        allowed: ['micro_steps', 'time_boxed', 'purpose', 'challenge', 'curiosity'],
      },
      { field: 'encouragementLevel', message: expect.any(String), allowed: ['minimal', 'moderate', 'enthusiastic'] },
    ]);
  });

  it('answers 400 VALIDATION_ERROR for an empty body (with and without {})', async () => {
    expect((await put('p-empty', {})).body.error.code).toBe('VALIDATION_ERROR');
    const none = await h.http().put('/v1/profile/p-empty').set(bearer(key));
    expect(none.status).toBe(400);
    expectMatchesOpenApi(none);
    expect(none.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('keeps learned state when pinning and unpinning', async () => {
    const rid = (await context('p-learned')).body.requestId;
    await h.http().post('/v1/outcome').set(bearer(key)).send({ requestId: rid, started: true });
    await eventually(async () => (await get('p-learned')).body.interactionCount === 1);
    const pinned = await put('p-learned', { preferredFraming: 'purpose' });
    expect(pinned.body).toMatchObject({ interactionCount: 1, profileVersion: 'v2' });
  });
});

describe('DELETE /v1/profile/:userId', () => {
  it('erases the profile, its versions, decisions and outcomes; is idempotent', async () => {
    const rid = (await context('p-erase')).body.requestId;
    await h.http().post('/v1/outcome').set(bearer(key)).send({ requestId: rid, started: true });
    await eventually(async () => (await get('p-erase')).body.interactionCount === 1);
    const res = await h.http().delete('/v1/profile/p-erase').set(bearer(key));
    expect(res.status).toBe(204);
    expectMatchesOpenApi(res);
    expect((await get('p-erase')).status).toBe(404);
    for (const table of ['profiles', 'profile_versions', 'decisions', 'outcomes'] as const) {
      const rows = await h.env.db.selectFrom(table).select('user_id').where('user_id', '=', 'p-erase').execute();
      expect(rows).toEqual([]);
    }
    expect((await h.http().delete('/v1/profile/p-erase').set(bearer(key))).status).toBe(204);
    expect((await h.http().delete('/v1/profile/never-existed').set(bearer(key))).status).toBe(204);
  });

  it('starts an erased user again from cold_start at v0', async () => {
    await put('p-again', { preferredFraming: 'purpose' });
    await h.http().delete('/v1/profile/p-again').set(bearer(key));
    const res = await context('p-again');
    expect(res.body.metadata).toMatchObject({ profilePhase: 'cold_start', interactionCount: 0 });
    expect((await get('p-again')).body).toMatchObject({ pinned: [], profileVersion: 'v0' });
  });
});

describe('GET /v1/profile/:userId/versions', () => {
  it('pages newest first with limit, before and hasMore', async () => {
    const values = ['micro_steps', 'time_boxed', 'purpose', 'challenge', 'curiosity'];
    for (const value of values) await put('p-pages', { preferredFraming: value });
    const first = await h.http().get('/v1/profile/p-pages/versions?limit=2').set(bearer(key));
    expect(first.body.data.map((v: { profileVersion: string }) => v.profileVersion)).toEqual(['v5', 'v4']);
    expect(first.body.hasMore).toBe(true);
    const next = await h.http().get('/v1/profile/p-pages/versions?limit=2&before=v4').set(bearer(key));
    expect(next.body.data.map((v: { profileVersion: string }) => v.profileVersion)).toEqual(['v3', 'v2']);
    const last = await h.http().get('/v1/profile/p-pages/versions?limit=2&before=2').set(bearer(key));
    expectMatchesOpenApi(last);
    expect(last.body).toEqual({
      data: [expect.objectContaining({ profileVersion: 'v1', cause: 'manual', createdAt: expect.any(String) })],
      hasMore: false,
    });
  });

  it.each([
    ['limit=0'],
    ['limit=101'],
    ['limit=abc'],
    ['limit=1e1'],
    ['limit=0x10'],
    ['before=xyz'],
    ['before=v2147483648'],
    ['before=99999999999999999999'],
    ['sort=asc'],
  ])('answers 400 VALIDATION_ERROR for ?%s', async (query) => {
    await put('p-vq', { preferredFraming: 'purpose' });
    const res = await h.http().get(`/v1/profile/p-vq/versions?${query}`).set(bearer(key));
    expect(res.status).toBe(400);
    expectMatchesOpenApi(res);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('answers 404 USER_NOT_FOUND for an unknown user', async () => {
    const res = await h.http().get('/v1/profile/nobody-v/versions').set(bearer(key));
    expect(res.status).toBe(404);
    expectMatchesOpenApi(res);
    expect(res.body.error.code).toBe('USER_NOT_FOUND');
  });
});
