import { KeyService } from '../../shared/credentials/key.service';
import { acknowledgeAnomaly, listAnomalies } from '../../shared/traffic/patterns/anomaly.repository';
import { detectPatterns } from '../../shared/traffic/patterns/pattern-job';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';
import { flushSeeded, seedMinute } from '../support/traffic';

let env: TestEnv;
let keys: KeyService;
beforeAll(async () => {
  env = await createTestEnv();
  keys = new KeyService(env.db, TEST_SECRET);
});
afterAll(() => env.close());

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const now = Date.UTC(2026, 6, 15, 10, 7, 30);

async function issue(account: string, name: string) {
  const issued = await keys.create({ account, environment: 'live', name });
  const row = await env.db.selectFrom('api_keys').select('account_id').where('id', '=', issued.id).executeTakeFirstOrThrow();
  return { id: issued.id, accountId: row.account_id };
}

describe('the unusual-pattern job on real Postgres', () => {
  let account: string;
  let steady: { id: string };
  let revoked: { id: string };
  let roaming: { id: string };
  let busy: { id: string };

  beforeAll(async () => {
    steady = await issue('patterns', 'steady');
    revoked = await issue('patterns', 'old deployment');
    roaming = await issue('patterns', 'roaming');
    busy = await issue('patterns', 'busy');
    account = (await env.db.selectFrom('accounts').select('id').where('name', '=', 'patterns').executeTakeFirstOrThrow()).id;
    const lastHour = now - (now % HOUR) - HOUR;
    // Ten days of a steady key: 100 requests every hour, from the US.
    for (let at = lastHour - 10 * DAY; at <= lastHour; at += HOUR) {
      await seedMinute(env, steady.id, at + 30 * MIN, { requests: { 'context:2xx': 100 }, latenciesMs: [3], countries: { US: 100 } });
    }
    // A key used two days ago, revoked since, still presented: 12 refusals in the last 15 minutes.
    await seedMinute(env, revoked.id, now - 2 * DAY, { requests: { 'context:2xx': 10 }, countries: { US: 10 } });
    await keys.revoke(revoked.id);
    await seedMinute(env, revoked.id, now - 4 * MIN, { requests: { 'context:401': 12 }, countries: { US: 12 } });
    // A key with three days of US traffic, now also called from Brazil.
    await seedMinute(env, roaming.id, now - 3 * DAY, { requests: { 'context:2xx': 20 }, countries: { US: 20 } });
    await seedMinute(env, roaming.id, now - 3 * MIN, { requests: { 'context:2xx': 5 }, countries: { US: 2, BR: 3 } });
    // A starter key (100,000 a month) at 9,000 a day since the 5th.
    for (let day = 5; day <= 14; day++) {
      await seedMinute(env, busy.id, Date.UTC(2026, 6, day, 12), { requests: { 'context:2xx': 9000 }, countries: { US: 9000 } });
    }
    await flushSeeded(env);
  });

  it('records one finding per rule met, with reason and numbers, and none for the steady key', async () => {
    expect(await detectPatterns(env.db, now)).toEqual({ keys: 4, findings: 3, created: 3 });
    const anomalies = await listAnomalies(env.db, { accountId: account });
    const byKey = Object.fromEntries(anomalies.map((a) => [a.keyId, a]));
    expect(byKey[steady.id]).toBeUndefined();
    expect(byKey[revoked.id]).toMatchObject({
      rule: 'refused-key',
      environment: 'live',
      numbers: { unauthorized: 12, refusal: 'revoked' },
    });
    expect(byKey[revoked.id]!.reason).toContain('"old deployment"');
    expect(byKey[roaming.id]).toMatchObject({ rule: 'new-country', subject: 'BR', numbers: { country: 'BR', requests: 3 } });
    // The quota is the account's: every live key's use counts, reported once, on the key that sends the most.
    expect(byKey[busy.id]).toMatchObject({ rule: 'quota-forecast', subject: '2026-07:100', numbers: { quota: 100_000 } });
    expect(byKey[busy.id]!.numbers.used).toBeGreaterThan(90_000);
    expect(anomalies.filter((a) => a.rule === 'quota-forecast')).toHaveLength(1);
    for (const anomaly of anomalies) expect(anomaly.firstSeen).toBe(new Date(now).toISOString());
  });

  it('continues an anomaly seen again (last seen moves) instead of raising it twice', async () => {
    const later = now + 5 * MIN;
    expect(await detectPatterns(env.db, later)).toMatchObject({ findings: 3, created: 0 });
    const refused = (await listAnomalies(env.db, { accountId: account, keyId: revoked.id }))[0]!;
    expect(refused.firstSeen).toBe(new Date(now).toISOString());
    expect(refused.lastSeen).toBe(new Date(later).toISOString());
  });

  it('lets an owner acknowledge, not a viewer nor another account', async () => {
    const refused = (await listAnomalies(env.db, { accountId: account, keyId: revoked.id }))[0]!;
    await expect(
      acknowledgeAnomaly(env.db, { accountId: account, role: 'viewer', name: 'v@example.com' }, refused.id, now),
    ).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    await expect(
      acknowledgeAnomaly(env.db, { accountId: 'acct_other', role: 'owner', name: 'x@example.com' }, refused.id, now),
    ).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    const acknowledged = await acknowledgeAnomaly(
      env.db,
      { accountId: account, role: 'owner', name: 'o@example.com' },
      refused.id,
      now + 6 * MIN,
    );
    expect(acknowledged).toMatchObject({ acknowledgedBy: 'o@example.com', acknowledgedAt: new Date(now + 6 * MIN).toISOString() });
    expect((await listAnomalies(env.db, { accountId: account })).map((a) => a.id)).not.toContain(refused.id);
    expect((await listAnomalies(env.db, { accountId: account, includeAcknowledged: true })).map((a) => a.id)).toContain(refused.id);
    // Seen again right after: it stays acknowledged and is not raised anew.
    expect(await detectPatterns(env.db, now + 7 * MIN)).toMatchObject({ created: 0 });
  });
});
