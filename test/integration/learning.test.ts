import { bearer, eventually, startHarness, type Harness } from '../support/harness';

let h: Harness;
let key: string;
beforeAll(async () => {
  h = await startHarness();
  key = await h.key('learning', 'test');
  h.startWorker();
});
afterAll(() => h.close());

/** A simulated end user who clearly prefers curiosity framing and a warm style. */
function simulatedOutcome(rec: { suggestedFraming: string; communicationStyle: string }, round: number) {
  const likesFraming = rec.suggestedFraming === 'curiosity';
  const likesStyle = rec.communicationStyle === 'warm';
  const noise = ((round * 7919) % 10) / 100; // deterministic jitter
  return {
    started: likesFraming || (likesStyle && round % 3 === 0),
    completed: likesFraming && likesStyle,
    satisfaction: Math.min(1, (likesFraming ? 0.6 : 0.1) + (likesStyle ? 0.3 : 0) + noise),
    timeToStart: likesFraming ? 30 : 1200,
  };
}

it('converges through the HTTP API and the worker to a simulated user’s clear preference', async () => {
  const framings: string[] = [];
  for (let round = 1; round <= 60; round++) {
    const rec = await h
      .http()
      .post('/v1/context')
      .set(bearer(key))
      .send({ userId: 'sim-user', task: `Task ${round}`, complexity: 'high' });
    expect(rec.status).toBe(200);
    expect(rec.body.metadata.interactionCount).toBe(round - 1);
    framings.push(rec.body.suggestedFraming);
    const res = await h
      .http()
      .post('/v1/outcome')
      .set(bearer(key))
      .send({ requestId: rec.body.requestId, ...simulatedOutcome(rec.body, round) });
    expect(res.status).toBe(202);
    await eventually(async () => (await h.http().get('/v1/profile/sim-user').set(bearer(key))).body.interactionCount === round, 10_000, 10);
  }
  const last10 = framings.slice(-10).filter((f) => f === 'curiosity').length;
  const first10 = framings.slice(0, 10).filter((f) => f === 'curiosity').length;
  expect(last10).toBeGreaterThanOrEqual(8);
  expect(last10).toBeGreaterThan(first10);
  const profile = await h.http().get('/v1/profile/sim-user').set(bearer(key));
  expect(profile.body).toMatchObject({ preferredFraming: 'curiosity', interactionCount: 60, profileVersion: 'v60' });
  expect(profile.body.profilePhase).toBe('established');
  const final = await h.http().post('/v1/context').set(bearer(key)).send({ userId: 'sim-user', task: 'One more', complexity: 'high' });
  expect(final.body.rationale).toMatch(/\d+ of \d+/);
  expect(final.body.metadata.profilePhase).toBe('established');
}, 120_000);
