import {
  COMMUNICATION_STYLES,
  COMPLEXITY_HANDLING,
  CosClient,
  CosError,
  ENCOURAGEMENT_LEVELS,
  FRAMINGS,
  type FetchLike,
  type ProfileVersion,
  type ResponseInfo,
} from '../../sdk/src';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';
import { eventsQueues } from '../support/ledger';
import { recordingFetch } from '../support/recording-fetch';

/** The SDK against the real API over HTTP, with a worker, Postgres and Redis. */
let h: Harness;
let baseUrl: string;
const keys = { test: '', live: '' };
beforeAll(async () => {
  h = await startHarness();
  baseUrl = await h.listen();
  h.startWorker();
  keys.test = await h.key('sdk', 'test');
  keys.live = await h.key('sdk', 'live'); // starter plan: 10 requests per second
});
afterAll(() => h.close());

describe('CosClient round trip', () => {
  it.each(['test', 'live'] as const)(
    'runs context → outcome → profile get, put, versions and delete with a %s key',
    async (environment) => {
      const answers: ResponseInfo[] = [];
      const client = new CosClient({ apiKey: keys[environment], baseUrl, onResponse: (info) => answers.push(info) });
      const userId = `sdk-round-trip/${environment}`; // a slash: the SDK encodes the path segment

      const decision = await client.context({ userId, task: 'Write the quarterly report', complexity: 'high', taskType: 'writing' });
      expect(decision.requestId).toMatch(/^req_/);
      expect(FRAMINGS).toContain(decision.suggestedFraming);
      expect(COMMUNICATION_STYLES).toContain(decision.communicationStyle);
      expect(COMPLEXITY_HANDLING).toContain(decision.complexity);
      expect(ENCOURAGEMENT_LEVELS).toContain(decision.encouragement);
      expect(decision.metadata).toEqual({ profilePhase: 'cold_start', interactionCount: 0, explorationMode: expect.any(Boolean) });

      const accepted = await client.outcome({ requestId: decision.requestId, started: true, completed: true, satisfaction: 0.8 });
      expect(accepted).toEqual({ success: true, message: expect.any(String) });

      const learned = await eventually(async () => {
        const profile = await client.getProfile(userId);
        return profile.interactionCount === 1 ? profile : null;
      });
      expect(learned).toMatchObject({ userId, profileVersion: 'v1', pinned: [], profilePhase: 'learning' });

      const pinned = await client.updateProfile(userId, { preferredFraming: 'purpose', encouragementLevel: 'moderate' });
      expect(pinned).toMatchObject({
        preferredFraming: 'purpose',
        encouragementLevel: 'moderate',
        pinned: ['preferredFraming', 'encouragementLevel'],
        profileVersion: 'v2',
      });

      const firstPage = await client.listVersions(userId, { limit: 1 });
      expect(firstPage.hasMore).toBe(true);
      expect(firstPage.data).toEqual([
        { profileVersion: 'v2', cause: 'manual', changed: expect.arrayContaining(['pinned']), createdAt: expect.any(String) },
      ]);
      expect((await client.listVersions(userId, { before: 'v2' })).data.map((v) => v.profileVersion)).toEqual(['v1']);
      const history: ProfileVersion[] = [];
      for await (const version of client.iterateVersions(userId, 1)) history.push(version);
      expect(history.map((v) => [v.profileVersion, v.cause])).toEqual([
        ['v2', 'manual'],
        ['v1', 'outcome'],
      ]);

      await expect(client.deleteProfile(userId)).resolves.toBeUndefined();
      await expect(client.deleteProfile(userId)).resolves.toBeUndefined();
      await expect(client.getProfile(userId)).rejects.toMatchObject({ code: 'USER_NOT_FOUND', statusCode: 404 });

      expect(answers.every((answer) => typeof answer.requestId === 'string')).toBe(true);
      if (environment === 'live') {
        expect(client.lastRateLimit).toEqual({ limit: 10, remaining: expect.any(Number), reset: expect.any(Number) });
        expect(answers.every((answer) => answer.rateLimit?.limit === 10)).toBe(true);
      } else {
        expect(client.lastRateLimit).toBeUndefined();
        expect(answers.every((answer) => answer.rateLimit === undefined)).toBe(true);
      }
    },
  );
});

describe('user ids that are path syntax, through the default transport', () => {
  // Dots (which fetch would resolve as path steps), a slash, percent signs, query and fragment
  // marks, and non-ASCII letters: each must reach its own user, never another path.
  it.each(['.', '..', 'a/b', '%2E', '50%', 'a?b#c', 'ünï'])(
    'round-trips %j: context, profile get, put, versions, delete',
    async (userId) => {
      const client = new CosClient({ apiKey: keys.test, baseUrl });
      await client.context({ userId, task: 'Plan the week', complexity: 'low' });
      expect(await client.getProfile(userId)).toMatchObject({ userId, profileVersion: 'v0' });

      const pinned = await client.updateProfile(userId, { preferredFraming: 'challenge' });
      expect(pinned).toMatchObject({ userId, preferredFraming: 'challenge', pinned: ['preferredFraming'], profileVersion: 'v1' });
      const page = await client.listVersions(userId);
      expect(page).toEqual({ data: [expect.objectContaining({ profileVersion: 'v1', cause: 'manual' })], hasMore: false });

      await client.deleteProfile(userId);
      await expect(client.getProfile(userId)).rejects.toMatchObject({ code: 'USER_NOT_FOUND', statusCode: 404 });
    },
  );

  it('the service decodes %2E segments to dots, in either case, and keeps the users apart', async () => {
    const client = new CosClient({ apiKey: keys.test, baseUrl });
    for (const userId of ['.', '..', 'versions']) await client.updateProfile(userId, { communicationStyle: 'warm' });
    const read = async (path: string) => {
      const res = await h.http().get(path).set(bearer(keys.test));
      return [res.status, res.body.userId ?? res.body.data?.length] as const;
    };
    expect(await read('/v1/profile/%2E')).toEqual([200, '.']);
    expect(await read('/v1/profile/%2e')).toEqual([200, '.']);
    expect(await read('/v1/profile/%2E%2E')).toEqual([200, '..']);
    expect(await read('/v1/profile/.%2e')).toEqual([200, '..']);
    expect(await read('/v1/profile/%2E/versions')).toEqual([200, 1]);
    expect(await read('/v1/profile/versions')).toEqual([200, 'versions']);
  });
});

describe('answers the SDK never retries', () => {
  const failOnce = async (call: (client: CosClient) => Promise<unknown>, apiKey = keys.test) => {
    const recorder = recordingFetch();
    const error = await call(new CosClient({ apiKey, baseUrl, fetch: recorder.fetch, maxRetries: 5 })).then(
      () => {
        throw new Error('expected the call to fail');
      },
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(CosError);
    expect(recorder.attempts).toHaveLength(1);
    const cosError = error as CosError;
    expect(cosError.attempts).toBe(1);
    expect(cosError.requestId).toBe(recorder.attempts[0]!.headers!.get('x-request-id'));
    expect(cosError.requestId).toBe(recorder.attempts[0]!.callId);
    return cosError;
  };

  it('400: an empty profile update, with the bad fields in details', async () => {
    const error = await failOnce((client) => client.updateProfile('sdk-400', {}));
    expect(error).toMatchObject({ code: 'VALIDATION_ERROR', statusCode: 400 });
    expect(error.details?.fields?.[0]).toMatchObject({ field: '(body)' });
  });

  it('400: an invalid userId', async () => {
    const error = await failOnce((client) => client.context({ userId: '', task: 'Plan', complexity: 'low' }));
    expect(error).toMatchObject({ code: 'INVALID_USER_ID', statusCode: 400 });
  });

  it('401: an unknown key', async () => {
    const error = await failOnce((client) => client.getProfile('sdk-401'), `cos_sk_test_${'A'.repeat(40)}`);
    expect(error).toMatchObject({ code: 'UNAUTHORIZED', statusCode: 401 });
  });

  it('403: a key without the profile scope', async () => {
    const contextOnly = await h.key('sdk-scoped', 'test', ['context']);
    const error = await failOnce((client) => client.getProfile('sdk-403'), contextOnly);
    expect(error).toMatchObject({ code: 'FORBIDDEN', statusCode: 403, details: { requiredScope: 'profile' } });
  });

  it('404: a user without a profile', async () => {
    const error = await failOnce((client) => client.getProfile('sdk-nobody'));
    expect(error).toMatchObject({ code: 'USER_NOT_FOUND', statusCode: 404 });
  });

  it('409: a different outcome for a requestId that already has one', async () => {
    const client = new CosClient({ apiKey: keys.test, baseUrl });
    const { requestId } = await client.context({ userId: 'sdk-409', task: 'Plan', complexity: 'low' });
    await client.outcome({ requestId, started: true });
    const error = await failOnce((retrying) => retrying.outcome({ requestId, started: false }));
    expect(error).toMatchObject({ code: 'OUTCOME_CONFLICT', statusCode: 409 });
  });
});

it('posts an outcome again when its answer was lost, and the service applies it once', async () => {
  const client = new CosClient({ apiKey: keys.test, baseUrl });
  const userId = 'sdk-lost-answer';
  const { requestId } = await client.context({ userId, task: 'Tidy the desk', complexity: 'low' });
  // The first attempt reaches the service (202) but its answer is lost on the way back, as when
  // a connection drops: the SDK cannot tell and posts the outcome again.
  const statuses: number[] = [];
  const losingFirstAnswer: FetchLike = async (url, init) => {
    const response = await fetch(url, init);
    statuses.push(response.status);
    if (statuses.length === 1) throw new TypeError('fetch failed', { cause: new Error('socket hang up') });
    return response;
  };
  const retrying = new CosClient({ apiKey: keys.test, baseUrl, fetch: losingFirstAnswer, retry: { baseDelay: 20 } });
  await expect(retrying.outcome({ requestId, started: true, satisfaction: 0.6 })).resolves.toEqual({
    success: true,
    message: expect.any(String),
  });
  expect(statuses).toEqual([202, 202]);

  // Both posts were enqueued before they were answered. Once the queue has nothing left to run,
  // no job is left that could apply the outcome again.
  const queues = eventsQueues(h.env.redis, h.env.keys);
  await eventually(async () => (await queues.count('waiting', 'active', 'delayed', 'prioritized', 'waiting-children')) === 0);
  await queues.close();
  expect(await client.getProfile(userId)).toMatchObject({ interactionCount: 1, profileVersion: 'v1' });
  const outcomes = (await client.listVersions(userId)).data.filter((version) => version.cause === 'outcome');
  expect(outcomes).toHaveLength(1);
  const rows = await h.env.db.selectFrom('outcomes').select('request_id').where('user_id', '=', userId).execute();
  expect(rows).toEqual([{ request_id: requestId }]);
});

describe('Idempotency-Key against the service', () => {
  it('makes one decision when the answer to the first attempt is lost: the retry is replayed', async () => {
    const answers: ResponseInfo[] = [];
    const lost: string[] = [];
    // The service answers the first attempt, but the answer never reaches the caller.
    const losing: FetchLike = async (url, init) => {
      const response = await fetch(url, init);
      if (lost.length > 0) return response;
      lost.push(((await response.json()) as { requestId: string }).requestId);
      throw new TypeError('fetch failed', { cause: new Error('socket hang up') });
    };
    const client = new CosClient({ apiKey: keys.test, baseUrl, fetch: losing, onResponse: (info) => answers.push(info) });
    const decision = await client.context({ userId: 'sdk-lost-answer', task: 'Book the trip' });
    expect(decision.requestId).toBe(lost[0]);
    // The caller saw one answer: the replay of the lost one.
    expect(answers.map((a) => a.replayed)).toEqual([true]);
  });

  it('refuses a key reused with another request, without retrying', async () => {
    const answers: ResponseInfo[] = [];
    const client = new CosClient({ apiKey: keys.test, baseUrl, onResponse: (info) => answers.push(info) });
    const idempotencyKey = `sdk-reused-${Date.now()}`;
    await client.context({ userId: 'sdk-reused', task: 'One' }, { idempotencyKey });
    const again = await client.context({ userId: 'sdk-reused', task: 'One' }, { idempotencyKey });
    expect(answers.at(-1)?.replayed).toBe(true);
    const refused = await client.context({ userId: 'sdk-reused', task: 'Another' }, { idempotencyKey }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', statusCode: 409 });
    expect(answers.filter((a) => a.statusCode === 409)).toHaveLength(1);
    expect(again.requestId).toMatch(/^req_/);
  });
});
