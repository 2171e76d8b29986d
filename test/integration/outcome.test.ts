import { issueRequestId } from '../../shared/ids/request-id';
import { findAccount } from '../../shared/accounts/account.repository';
import { JOBS } from '../../shared/jobs/catalog';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';
import { expectMatchesOpenApi } from '../support/openapi';
import { eventsIdle, eventsQueues } from '../support/ledger';
import { TEST_SECRET } from '../support/test-env';
import { buildCarriedDecision } from '../support/request-ids';

let h: Harness;
let key: string;
beforeAll(async () => {
  h = await startHarness();
  key = await h.key('outcomes', 'test');
  h.startWorker();
});
afterAll(() => h.close());

async function newRequestId(userId: string, k = key): Promise<string> {
  const res = await h.http().post('/v1/context').set(bearer(k)).send({ userId, task: 'Plan the week', complexity: 'medium' });
  expect(res.status).toBe(200);
  expectMatchesOpenApi(res);
  return res.body.requestId;
}
const postOutcome = (body: Record<string, unknown>, k = key) => h.http().post('/v1/outcome').set(bearer(k)).send(body);
const profile = (userId: string, k = key) => h.http().get(`/v1/profile/${userId}`).set(bearer(k));

describe('POST /v1/outcome', () => {
  it('accepts an outcome with 202, and the worker applies it: interactionCount 1, profileVersion v1, reward stored', async () => {
    const requestId = await newRequestId('o-apply');
    const res = await postOutcome({ requestId, started: true, completed: true, timeToStart: 0, flowState: true, satisfaction: 1 });
    expect(res.status).toBe(202);
    expectMatchesOpenApi(res);
    expect(res.body).toEqual({ success: true, message: expect.any(String) });
    const applied = await eventually(async () => {
      const p = await profile('o-apply');
      return p.body.interactionCount === 1 ? p.body : null;
    });
    expect(applied).toMatchObject({ profileVersion: 'v1', profilePhase: 'learning' });
    const row = await h.env.db.selectFrom('outcomes').selectAll().where('request_id', '=', requestId).executeTakeFirstOrThrow();
    expect(row.reward).toBeCloseTo(1, 6);
    expect(row.user_id).toBe('o-apply');
  });

  it('accepts the same outcome again (a retry) with 202 and applies it once', async () => {
    const requestId = await newRequestId('o-retry');
    const body = { requestId, started: true, satisfaction: 0.5 };
    for (let i = 0; i < 3; i++) expect((await postOutcome(body)).status).toBe(202);
    await eventually(async () => (await profile('o-retry')).body.interactionCount === 1);
    // Nothing left that could apply it again: the queue is idle, and each post's job completed.
    const queue = eventsQueues(h.env.redis, h.env.keys);
    await eventually(() => eventsIdle(queue));
    const jobs = (await queue.getJobs(['completed'])).filter(
      (job) => job.name === 'outcomes' && JOBS.outcomes.schema.parse(job.data).outcomes.some((o) => o.requestId === requestId),
    );
    await queue.close();
    expect(jobs).toHaveLength(3);
    const p = await profile('o-retry');
    expect(p.body).toMatchObject({ interactionCount: 1, profileVersion: 'v1' });
    const count = await h.env.db
      .selectFrom('outcomes')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('user_id', '=', 'o-retry')
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1);
  });

  it('refuses different values for a requestId that already has an outcome with 409 OUTCOME_CONFLICT', async () => {
    const requestId = await newRequestId('o-conflict');
    expect((await postOutcome({ requestId, started: true })).status).toBe(202);
    const res = await postOutcome({ requestId, started: false });
    expect(res.status).toBe(409);
    expectMatchesOpenApi(res);
    expect(res.body.error.code).toBe('OUTCOME_CONFLICT');
  });

  it('takes one of two different outcomes sent at once for a requestId, refuses the other 409, and applies the one it took', async () => {
    for (let round = 0; round < 5; round++) {
      const userId = `o-race-${round}`;
      const requestId = await newRequestId(userId);
      const bodies = [
        { requestId, started: true, satisfaction: 0.9 },
        { requestId, started: false, satisfaction: 0.1 },
      ];
      // Both arrive together, several times each: the claim is atomic, so one body wins all its posts.
      const answers = await Promise.all([...bodies, ...bodies, ...bodies].map((body) => postOutcome(body)));
      const statuses = answers.map((res) => res.status);
      const winner = statuses[0] === 202 ? 0 : 1;
      expect(statuses).toEqual([0, 1, 0, 1, 0, 1].map((i) => (i === winner ? 202 : 409)));
      for (const res of answers.filter((a) => a.status === 409)) expect(res.body.error.code).toBe('OUTCOME_CONFLICT');
      await eventually(async () => (await profile(userId)).body.interactionCount === 1);
      const row = await h.env.db.selectFrom('outcomes').select('fields').where('request_id', '=', requestId).executeTakeFirstOrThrow();
      expect(row.fields).toMatchObject({ started: bodies[winner]!.started, satisfaction: bodies[winner]!.satisfaction });
    }
  });

  it.each([
    ['missing requestId', { started: true }],
    ['a requestId that is not a string', { requestId: 12, started: true }],
    ['a malformed requestId', { requestId: 'abc', started: true }],
    ['a malformed requestId and no signals', { requestId: 'abc' }],
  ])('answers 400 INVALID_REQUEST_ID for %s', async (_label, body) => {
    const res = await postOutcome(body);
    expect(res.status).toBe(400);
    expectMatchesOpenApi(res);
    expect(res.body.error.code).toBe('INVALID_REQUEST_ID');
  });

  it.each([
    ['missing started', { started: undefined }],
    ['satisfaction above 1', { satisfaction: 1.5 }],
    ['negative timeToStart', { timeToStart: -1 }],
    ['a non-boolean completed', { completed: 'yes' }],
    ['an unknown field', { mood: 'happy' }],
    ['metadata over 8 KiB', { metadata: { x: 'y'.repeat(9000) } }],
  ])('answers 400 VALIDATION_ERROR for %s', async (_label, extra) => {
    const requestId = await newRequestId('o-validation');
    const res = await postOutcome({ requestId, started: true, ...extra });
    expect(res.status).toBe(400);
    expectMatchesOpenApi(res);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('answers 404 REQUEST_NOT_FOUND for a well-formed requestId never issued', async () => {
    const forged = `req_${'A'.repeat(76)}`;
    const res = await postOutcome({ requestId: forged, started: true });
    expect(res.status).toBe(404);
    expectMatchesOpenApi(res);
    expect(res.body.error.code).toBe('REQUEST_NOT_FOUND');
  });

  it('answers 404 for another tenant’s requestId, indistinguishable from a made-up one', async () => {
    const otherKey = await h.key('other-tenant', 'test');
    const theirs = await newRequestId('o-theirs', otherKey);
    const res = await postOutcome({ requestId: theirs, started: true });
    expect(res.status).toBe(404);
    expect(res.body.error).toEqual({
      code: 'REQUEST_NOT_FOUND',
      statusCode: 404,
      message: expect.any(String),
      traceId: res.headers['x-request-id'],
      docUrl: '/docs#error-request_not_found',
    });
    const liveKey = await h.key('outcomes', 'live');
    const sameAccountOtherEnv = await postOutcome({ requestId: await newRequestId('o-env'), started: true }, liveKey);
    expect(sameAccountOtherEnv.status).toBe(404);
  });

  it('answers 410 OUTCOME_WINDOW_CLOSED past the outcome window', async () => {
    const account = (await findAccount(h.env.db, 'outcomes'))!;
    const old = issueRequestId(
      {
        accountId: account.id,
        environment: 'test',
        issuedAt: Date.now() - 8 * 86_400_000,
        userHash: '00'.repeat(8),
        decision: buildCarriedDecision(),
      },
      TEST_SECRET,
    );
    const res = await postOutcome({ requestId: old, started: true });
    expect(res.status).toBe(410);
    expectMatchesOpenApi(res);
    expect(res.body.error.code).toBe('OUTCOME_WINDOW_CLOSED');
  });

  it('writes a version row with cause outcome for every applied outcome', async () => {
    const ids = [await newRequestId('o-versions'), await newRequestId('o-versions')];
    for (const requestId of ids) expect((await postOutcome({ requestId, started: true })).status).toBe(202);
    await eventually(async () => (await profile('o-versions')).body.interactionCount === 2);
    const versions = await h.http().get('/v1/profile/o-versions/versions').set(bearer(key));
    expect(versions.status).toBe(200);
    expectMatchesOpenApi(versions);
    expect(versions.body.data.map((v: { profileVersion: string }) => v.profileVersion)).toEqual(['v2', 'v1']);
    expect(versions.body.data.every((v: { cause: string }) => v.cause === 'outcome')).toBe(true);
    expect(versions.body.data[1].changed).toContain('interactionCount');
  });
});
