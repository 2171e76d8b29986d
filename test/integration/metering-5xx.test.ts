import { sql } from 'kysely';
import { monthlyTotals } from '../../shared/usage/usage.repository';
import { flushUsage } from '../../shared/usage/usage-flush';
import { bearer, eventuallyEqual, startHarness, type Harness } from '../support/harness';

/**
 * A live request the limiter let through (metered 2xx) that then fails with a 5xx is metered
 * as 5xx. The failure is real: the profiles table is gone from this file's own database, so
 * the profile read fails in Postgres (the key store, another table, keeps working).
 */
let h: Harness;
const DAY = Date.UTC(2026, 8, 14, 12);
beforeAll(async () => {
  h = await startHarness({}, { clock: () => DAY });
});
afterAll(() => h.close());

it('meters a request that ends 5xx (the profile read fails in Postgres) as 5xx, not 2xx', async () => {
  const { key, id } = await h.keys.create({ account: 'broken-profiles', environment: 'live' });
  const read = (userId: string) => h.http().get(`/v1/profile/${userId}`).set(bearer(key));
  expect((await read('nobody')).status).toBe(404);
  await sql`alter table profiles rename to profiles_gone`.execute(h.env.db);
  const failed = await read('somebody');
  expect(failed.status).toBe(500);
  expect(failed.body.error.code).toBe('INTERNAL_ERROR');
  expect(failed.headers['x-ratelimit-limit']).toBe('10');
  await eventuallyEqual(
    () => h.env.usage('2026-09-14', id),
    { [`${id}|profile.get|2xx`]: '0', [`${id}|profile.get|4xx`]: '1', [`${id}|profile.get|5xx`]: '1' },
    5000,
  );
  // Flushed to Postgres, the 5xx is counted but not billable: billing reads 1 (the 404), of 2 in all.
  await flushUsage(h.env);
  const totals = await monthlyTotals(h.env.db, {
    accountId: (await h.keys.create({ account: 'broken-profiles', environment: 'test' })).accountId,
    month: '2026-09',
  });
  expect(totals).toMatchObject({ billableRequests: 1, requests4xx: 1, requests5xx: 1, totalRequests: 2 });
});
