import { FRAMINGS, STYLES, COMPLEXITY_HANDLING, ENCOURAGEMENT } from '../../shared/domain/arms';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';
import { expectMatchesOpenApi } from '../support/openapi';

let h: Harness;
let key: string;
beforeAll(async () => {
  h = await startHarness();
  key = await h.key('ctx-account');
  h.startWorker();
});
afterAll(() => h.close());

const context = (body: Record<string, unknown>, k = key) =>
  h
    .http()
    .post('/v1/context')
    .set(bearer(k))
    .send({ userId: 'u1', task: 'Write the report', complexity: 'high', ...body });

describe('POST /v1/context', () => {
  it('answers with values from the documented value sets, a signed requestId and cold-start metadata', async () => {
    const res = await context({ userId: 'new-user' });
    expect(res.status).toBe(200);
    expectMatchesOpenApi(res);
    expect(res.headers['x-request-id']).toBeTruthy();
    expect(res.body.requestId).toMatch(/^req_[A-Za-z0-9_-]+$/);
    expect(FRAMINGS).toContain(res.body.suggestedFraming);
    expect(STYLES).toContain(res.body.communicationStyle);
    expect(COMPLEXITY_HANDLING).toContain(res.body.complexity);
    expect(ENCOURAGEMENT).toContain(res.body.encouragement);
    expect(res.body.confidence).toBeGreaterThanOrEqual(0);
    expect(res.body.confidence).toBeLessThanOrEqual(1);
    expect(res.body.rationale.length).toBeGreaterThan(10);
    expect(res.body.metadata).toEqual({ profilePhase: 'cold_start', interactionCount: 0, explorationMode: expect.any(Boolean) });
  });

  it('issues a different requestId on every call', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) ids.add((await context({})).body.requestId);
    expect(ids.size).toBe(5);
  });

  it('creates the user lazily: the profile exists right after the first context call, and the worker persists it', async () => {
    await context({ userId: 'lazy-user' });
    const profile = await h.http().get('/v1/profile/lazy-user').set(bearer(key));
    expect(profile.status).toBe(200);
    expectMatchesOpenApi(profile);
    expect(profile.body).toMatchObject({
      userId: 'lazy-user',
      profilePhase: 'cold_start',
      interactionCount: 0,
      profileVersion: 'v0',
      pinned: [],
    });
    await eventually(() => h.env.db.selectFrom('profiles').select('user_id').where('user_id', '=', 'lazy-user').executeTakeFirst());
    await eventually(() => h.env.db.selectFrom('decisions').selectAll().where('user_id', '=', 'lazy-user').executeTakeFirst());
  });

  it('logs the decision with its selection probabilities and context', async () => {
    const res = await context({ userId: 'logged', taskType: 'writing', metadata: { source: 'test' } });
    const row = await eventually(() =>
      h.env.db.selectFrom('decisions').selectAll().where('request_id', '=', res.body.requestId).executeTakeFirst(),
    );
    expect(row.chosen).toEqual({
      framing: res.body.suggestedFraming,
      style: res.body.communicationStyle,
      complexityHandling: res.body.complexity,
      encouragement: res.body.encouragement,
    });
    const probabilities = row.probabilities as Record<string, number>;
    for (const dim of ['framing', 'style', 'complexityHandling', 'encouragement']) {
      expect(probabilities[dim]).toBeGreaterThan(0);
      expect(probabilities[dim]).toBeLessThanOrEqual(1);
    }
    expect(row.context).toEqual({ complexity: 'high', taskType: 'writing', metadata: { source: 'test' } });
  });

  it('answers a request without complexity, logs it without one, and the worker learns from its outcome', async () => {
    const res = await h.http().post('/v1/context').set(bearer(key)).send({ userId: 'no-complexity', task: 'Write the report' });
    expect(res.status).toBe(200);
    expect(res.body.rationale).not.toMatch(/undefined|(low|medium|high) complexity/);
    const withNull = await context({ userId: 'no-complexity', complexity: null });
    expect(withNull.status).toBe(200);
    const row = await eventually(() =>
      h.env.db.selectFrom('decisions').selectAll().where('request_id', '=', res.body.requestId).executeTakeFirst(),
    );
    expect(row.context).toEqual({});
    const outcome = await h.http().post('/v1/outcome').set(bearer(key)).send({ requestId: res.body.requestId, started: true });
    expect(outcome.status).toBe(202);
    const profile = await eventually(async () => {
      const found = await h.env.db.selectFrom('profiles').selectAll().where('user_id', '=', 'no-complexity').executeTakeFirst();
      return found && found.interaction_count === 1 ? found : null;
    });
    const state = profile.state as { history: { taskComplexity: number[] } };
    // The index after the three known complexities marks an unknown one.
    expect(state.history.taskComplexity).toEqual([3]);
  });

  it.each([
    ['empty userId', 'INVALID_USER_ID', { userId: '' }],
    ['257-character userId', 'INVALID_USER_ID', { userId: 'x'.repeat(257) }],
    ['userId with a control character', 'INVALID_USER_ID', { userId: 'bad\u0001id' }],
    ['numeric userId', 'INVALID_USER_ID', { userId: 42 }],
    ['empty task', 'VALIDATION_ERROR', { task: '' }],
    ['8001-character task', 'VALIDATION_ERROR', { task: 'x'.repeat(8001) }],
    ['unknown complexity', 'VALIDATION_ERROR', { complexity: 'extreme' }],
    ['101-character taskType', 'VALIDATION_ERROR', { taskType: 'x'.repeat(101) }],
    ['metadata over 8 KiB', 'VALIDATION_ERROR', { metadata: { blob: 'x'.repeat(8200) } }],
    ['metadata that is not an object', 'VALIDATION_ERROR', { metadata: 'not-an-object' }],
    ['an unknown field', 'VALIDATION_ERROR', { surprise: true }],
  ])('refuses %s with %s', async (_label, code, body) => {
    const res = await context(body);
    expect(res.status).toBe(400);
    expectMatchesOpenApi(res);
    expect(res.body.error).toMatchObject({ code, statusCode: 400, message: expect.any(String) });
  });

  it('lists allowed values for a bad enum field', async () => {
    const res = await context({ complexity: 'extreme' });
    expectMatchesOpenApi(res);
    expect(res.body.error.details.fields).toEqual([
      { field: 'complexity', message: expect.any(String), allowed: ['low', 'medium', 'high'] },
    ]);
  });
});
