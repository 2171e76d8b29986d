import { bearer, eventually, startHarness, type Harness } from '../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  h.startWorker();
});
afterAll(() => h.close());

describe('tenant and environment isolation', () => {
  it('keeps the same userId apart across accounts and across test/live', async () => {
    const aTest = await h.key('iso-a', 'test');
    const aLive = await h.key('iso-a', 'live');
    const bTest = await h.key('iso-b', 'test');
    await h.http().put('/v1/profile/shared-user').set(bearer(aTest)).send({ preferredFraming: 'purpose' });
    await h.http().put('/v1/profile/shared-user').set(bearer(aLive)).send({ preferredFraming: 'challenge' });
    expect((await h.http().get('/v1/profile/shared-user').set(bearer(bTest))).status).toBe(404);
    expect((await h.http().get('/v1/profile/shared-user').set(bearer(aTest))).body.preferredFraming).toBe('purpose');
    expect((await h.http().get('/v1/profile/shared-user').set(bearer(aLive))).body.preferredFraming).toBe('challenge');

    const rid = (await h.http().post('/v1/context').set(bearer(aTest)).send({ userId: 'shared-user', task: 't', complexity: 'low' })).body
      .requestId;
    expect((await h.http().post('/v1/outcome').set(bearer(aTest)).send({ requestId: rid, started: true })).status).toBe(202);
    await eventually(async () => (await h.http().get('/v1/profile/shared-user').set(bearer(aTest))).body.interactionCount === 1);
    expect((await h.http().get('/v1/profile/shared-user').set(bearer(aLive))).body.interactionCount).toBe(0);

    await h.http().delete('/v1/profile/shared-user').set(bearer(bTest));
    expect((await h.http().get('/v1/profile/shared-user').set(bearer(aTest))).status).toBe(200);
    await h.http().delete('/v1/profile/shared-user').set(bearer(aTest));
    expect((await h.http().get('/v1/profile/shared-user').set(bearer(aLive))).status).toBe(200);
  });
});
