import { STYLES } from '../../shared/domain/arms';
import { bearer, startHarness, type Harness } from '../support/harness';

let h: Harness;
let key: string;
beforeAll(async () => {
  h = await startHarness();
  key = await h.key('round-trip', 'test');
});
afterAll(() => h.close());

type Profile = Record<string, unknown> & { profileVersion: string; pinned: string[]; communicationStyle: string };

const get = async (userId: string): Promise<Profile> => {
  const res = await h.http().get(`/v1/profile/${userId}`).set(bearer(key));
  expect(res.status).toBe(200);
  return res.body as Profile;
};
const put = (userId: string, body: unknown) =>
  h
    .http()
    .put(`/v1/profile/${userId}`)
    .set(bearer(key))
    .send(body as object);
const versionCount = async (userId: string) =>
  ((await h.http().get(`/v1/profile/${userId}/versions`).set(bearer(key))).body as { data: unknown[] }).data.length;
const createUser = async (userId: string) =>
  expect((await h.http().post('/v1/context').set(bearer(key)).send({ userId, task: 'Plan', complexity: 'low' })).status).toBe(200);

describe('PUT /v1/profile/:userId with a profile as GET returns it', () => {
  it('applies the one field changed, pinning it, and leaves the others learned', async () => {
    await createUser('rt-change');
    const profile = await get('rt-change');
    const style = STYLES.find((s) => s !== profile.communicationStyle)!;
    const res = await put('rt-change', { ...profile, communicationStyle: style });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...profile,
      communicationStyle: style,
      pinned: ['communicationStyle'],
      profileVersion: 'v1',
      lastUpdated: expect.any(String),
    });
    expect(await get('rt-change')).toEqual(res.body);
  });

  it('does not bump profileVersion or record a version when the GET body is sent back unchanged', async () => {
    await createUser('rt-noop');
    await put('rt-noop', { preferredFraming: 'purpose' });
    const profile = await get('rt-noop');
    const before = await versionCount('rt-noop');
    const res = await put('rt-noop', profile);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(profile);
    expect(await versionCount('rt-noop')).toBe(before);
  });

  it("treats a new user's profile, cached by the context call and not stored yet, sent back unchanged as a no-op", async () => {
    await createUser('rt-new');
    const profile = await get('rt-new');
    const res = await put('rt-new', profile);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(profile);
    expect(await get('rt-new')).toEqual(profile);
  });

  it('ignores read-only fields sent as null', async () => {
    await createUser('rt-nulls');
    const profile = await get('rt-nulls');
    const nulls = { userId: null, pinned: null, profilePhase: null, interactionCount: null, lastUpdated: null, profileVersion: null };
    const res = await put('rt-nulls', { ...nulls, communicationStyle: profile.communicationStyle });
    expect(res.status).toBe(200);
    // Without `pinned`, a value pins its dimension even when it equals the learned one.
    expect(res.body.pinned).toEqual(['communicationStyle']);
  });

  it("refuses a userId other than the path's with 400 VALIDATION_ERROR naming the field", async () => {
    await createUser('rt-user');
    const profile = await get('rt-user');
    const res = await put('rt-user', { ...profile, userId: 'someone-else' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      statusCode: 400,
      details: { fields: [{ field: 'userId', message: 'must be "rt-user", the userId in the path' }] },
    });
    expect((await get('rt-user')).profileVersion).toBe(profile.profileVersion);
  });

  it.each([
    ['profileVersion', 'v99'],
    ['interactionCount', 7],
    ['profilePhase', 'established'],
    ['pinned', ['preferredFraming']],
    ['lastUpdated', '2020-01-01T00:00:00.000Z'],
  ])('refuses a changed read-only %s with 400 saying it is read-only', async (field, value) => {
    await createUser('rt-read-only');
    const profile = await get('rt-read-only');
    const res = await put('rt-read-only', { ...profile, [field]: value });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.fields).toEqual([{ field, message: expect.stringContaining('is read-only') }]);
    expect(res.body.error.message).toContain(`${field} is read-only`);
  });

  it('accepts lastUpdated as another spelling of the same instant', async () => {
    await createUser('rt-instant');
    const profile = await get('rt-instant');
    const sameInstant = new Date(Date.parse(profile.lastUpdated as string)).toISOString().replace('Z', '+00:00');
    const res = await put('rt-instant', { ...profile, lastUpdated: sameInstant });
    expect(res.status).toBe(200);
    expect(res.body.profileVersion).toBe(profile.profileVersion);
  });

  it('still needs at least one dimension: read-only fields alone are a 400', async () => {
    await createUser('rt-only-read-only');
    const { userId, profileVersion } = await get('rt-only-read-only');
    const res = await put('rt-only-read-only', { userId, profileVersion });
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual([{ field: '(body)', message: 'provide at least one field to update' }]);
  });
});
