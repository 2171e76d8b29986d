import { findAccount } from '../../shared/accounts/account.repository';
import { changeRestriction } from '../../shared/accounts/account-restriction';
import { listKeys } from '../../shared/credentials/key.repository';
import { KeyService, PlanLimitError } from '../../shared/credentials/key.service';
import { markRotationDue } from '../../shared/credentials/rotation-due';
import { usageField } from '../../shared/limits/limiter';
import { recordFinding } from '../../shared/traffic/patterns/anomaly.repository';
import { flushUsage } from '../../shared/usage/usage-flush';
import { WEBHOOK_EVENT_DATA } from '../../shared/webhooks/event-catalog';
import { listEvents, type WebhookEvent } from '../../shared/webhooks/outbox.repository';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';

/** Every cause writes its webhook event into the outbox in its own transaction. */
let env: TestEnv;
let keys: KeyService;
beforeAll(async () => {
  env = await createTestEnv();
  keys = new KeyService(env.db, TEST_SECRET);
});
afterAll(() => env.close());

const DAY = 86_400_000;
const accountId = async (name: string) => (await findAccount(env.db, name))!.id;
/** The account's events, oldest first, each checked against its type's schema. */
async function events(account: string): Promise<WebhookEvent[]> {
  const found = (await listEvents(env.db, await accountId(account))).reverse();
  for (const event of found) expect(WEBHOOK_EVENT_DATA[event.type].safeParse(event.data).success).toBe(true);
  return found;
}

/** Meters `count` requests of a live key into Redis as the API would, for the usage flush to move. */
async function meter(account: string, keyId: string, day: string, count: number) {
  const shard = env.keys.usageShard(await accountId(account));
  await env.redis.hincrby(env.keys.usage(day, shard), usageField({ keyId, endpoint: 'context' }, '2xx'), count);
  await env.redis.sadd(env.keys.usageDays(shard), day);
}

describe('key events', () => {
  it('records key.created, key.rotated, key.revoked and key.deleted, naming the key but never its secret', async () => {
    const issued = await keys.create({ account: 'outbox-keys', environment: 'live', name: 'checkout' });
    const rotated = await keys.rotate(issued.id, 3_600_000);
    await keys.revoke(rotated.id);
    await keys.revoke(rotated.id); // again: already revoked, nothing new to announce
    await keys.delete(issued.id);
    const recorded = await events('outbox-keys');
    expect(recorded.map((event) => [event.type, event.environment])).toEqual([
      ['key.created', 'live'],
      ['key.rotated', 'live'],
      ['key.revoked', 'live'],
      ['key.deleted', 'live'],
    ]);
    expect(recorded[1]!.data).toEqual({
      key: { id: issued.id, name: 'checkout', last4: issued.last4 },
      replacement: { id: rotated.id, name: 'checkout', last4: rotated.last4 },
      previousKeyExpiresAt: rotated.previousKeyExpiresAt,
    });
    const text = JSON.stringify(recorded);
    expect(text).not.toContain(issued.key);
    expect(text).not.toContain(rotated.key);
    expect(new Set(recorded.map((event) => event.id)).size).toBe(4);
    expect(recorded.every((event) => /^msg_[0-9A-Za-z]{24}$/.test(event.id))).toBe(true);
  });

  it('records one key.revoked and one key.deleted however many of the same change run at once', async () => {
    const issued = await keys.create({ account: 'outbox-race', environment: 'live', name: 'raced' });
    const revocations = await Promise.all(Array.from({ length: 8 }, () => keys.revoke(issued.id)));
    expect(new Set(revocations.map((key) => key.revokedAt)).size).toBe(1);
    await Promise.allSettled(Array.from({ length: 8 }, () => keys.delete(issued.id)));
    expect((await events('outbox-race')).map((event) => event.type)).toEqual(['key.created', 'key.revoked', 'key.deleted']);
  });

  it('records nothing when the change is refused: the event lives and dies with its transaction', async () => {
    for (let i = 0; i < 5; i++) await keys.create({ account: 'outbox-cap', environment: 'live' });
    await expect(keys.create({ account: 'outbox-cap', environment: 'live' })).rejects.toBeInstanceOf(PlanLimitError);
    expect((await events('outbox-cap')).filter((event) => event.type === 'key.created')).toHaveLength(5);
  });

  it('names the environment of the key: a test key’s events are test events', async () => {
    await keys.create({ account: 'outbox-env', environment: 'test' });
    expect((await events('outbox-env')).map((event) => event.environment)).toEqual(['test']);
  });
});

describe('pattern.opened', () => {
  it('is recorded with the pattern’s insert, carrying the reason the dashboard shows; a continuing pattern adds none', async () => {
    const key = await keys.create({ account: 'outbox-patterns', environment: 'live', name: 'mobile' });
    const id = await accountId('outbox-patterns');
    const reason = 'First requests from Japan (JP) for this key: 12 in the last hour';
    const finding = { rule: 'new-country' as const, subject: 'JP', reason, numbers: { country: 'JP', requests: 12 } };
    const now = Date.now();
    await env.db
      .transaction()
      .execute((tx) => recordFinding(tx, { accountId: id, environment: 'live', keyId: key.id }, finding, now, 3_600_000));
    await env.db
      .transaction()
      .execute((tx) => recordFinding(tx, { accountId: id, environment: 'live', keyId: key.id }, finding, now + 60_000, 3_600_000));
    const opened = (await events('outbox-patterns')).filter((event) => event.type === 'pattern.opened');
    expect(opened).toHaveLength(1);
    expect(opened[0]!.data).toMatchObject({
      rule: 'new-country',
      subject: 'JP',
      reason,
      key: { id: key.id, name: 'mobile', last4: key.last4 },
    });
    const pattern = await env.db.selectFrom('traffic_anomalies').select('id').where('account_id', '=', id).executeTakeFirstOrThrow();
    expect(opened[0]!.data.patternId).toBe(Number(pattern.id));
  });
});

describe('quota.threshold', () => {
  it('is recorded by the usage flush that crosses 75, 90 and 100 % of the monthly quota, each once a month', async () => {
    const key = await keys.create({ account: 'outbox-quota', environment: 'live' }); // starter: 100,000 a month
    const thresholds = async () =>
      (await events('outbox-quota'))
        .filter((event) => event.type === 'quota.threshold')
        .map((event) => event.data as { percent: number; month: string })
        // One flush's events share their time: ordered by month and threshold.
        .sort((a, b) => a.month.localeCompare(b.month) || a.percent - b.percent);
    await meter('outbox-quota', key.id, '2026-11-03', 74_999);
    await flushUsage(env);
    expect(await thresholds()).toEqual([]);
    await meter('outbox-quota', key.id, '2026-11-04', 1);
    await flushUsage(env);
    expect(await thresholds()).toEqual([{ percent: 75, month: '2026-11', used: 75_000, quota: 100_000 }]);
    // One flush crossing two thresholds records both; flushes that cross none record nothing.
    await meter('outbox-quota', key.id, '2026-11-05', 25_000);
    await flushUsage(env);
    await meter('outbox-quota', key.id, '2026-11-06', 10);
    await flushUsage(env);
    expect((await thresholds()).map((data) => data.percent)).toEqual([75, 90, 100]);
    // The next month starts afresh.
    await meter('outbox-quota', key.id, '2026-12-01', 80_000);
    await flushUsage(env);
    expect((await thresholds()).map((data) => [data.month, data.percent])).toEqual([
      ['2026-11', 75],
      ['2026-11', 90],
      ['2026-11', 100],
      ['2026-12', 75],
    ]);
  });

  it('counts 429s out: refused requests do not use the quota', async () => {
    const key = await keys.create({ account: 'outbox-quota-429', environment: 'live' });
    const shard = env.keys.usageShard(await accountId('outbox-quota-429'));
    await env.redis.hincrby(env.keys.usage('2026-11-07', shard), usageField({ keyId: key.id, endpoint: 'context' }, '429'), 90_000);
    await env.redis.sadd(env.keys.usageDays(shard), '2026-11-07');
    await flushUsage(env);
    expect((await events('outbox-quota-429')).filter((event) => event.type === 'quota.threshold')).toEqual([]);
  });
});

describe('key.rotation_due', () => {
  it('marks live keys in use that turned 90 days old, once, with their event; the keys list shows the mark', async () => {
    const old = await keys.create({ account: 'outbox-rotation', environment: 'live', name: 'old' });
    const young = await keys.create({ account: 'outbox-rotation', environment: 'live', name: 'young' });
    const oldTest = await keys.create({ account: 'outbox-rotation', environment: 'test', name: 'old test' });
    const oldRevoked = await keys.create({ account: 'outbox-rotation', environment: 'live', name: 'old revoked' });
    await keys.revoke(oldRevoked.id);
    const now = Date.now();
    for (const [id, age] of [
      [old.id, 90 * DAY + 60_000],
      [young.id, 89 * DAY],
      [oldTest.id, 200 * DAY],
      [oldRevoked.id, 200 * DAY],
    ] as const) {
      await env.db
        .updateTable('api_keys')
        .set({ created_at: new Date(now - age) })
        .where('id', '=', id)
        .execute();
    }
    expect(await markRotationDue(env.db, now)).toBe(1);
    expect(await markRotationDue(env.db, now + DAY)).toBe(1); // the young key's turn, a day later
    expect(await markRotationDue(env.db, now + 2 * DAY)).toBe(0);
    const due = (await events('outbox-rotation')).filter((event) => event.type === 'key.rotation_due');
    expect(due.map((event) => [event.data.key, event.data.ageDays])).toEqual([
      [{ id: old.id, name: 'old', last4: old.last4 }, 90],
      [{ id: young.id, name: 'young', last4: young.last4 }, 90],
    ]);
    const listed = await listKeys(env.db, await accountId('outbox-rotation'));
    expect(listed.find((key) => key.id === old.id)!.rotationDueAt).toBe(new Date(now).toISOString());
    expect(listed.find((key) => key.id === oldTest.id)!.rotationDueAt).toBeNull();
  });
});

describe('account.restricted', () => {
  it('is recorded once per environment when an account becomes restricted, and not again while it stays so', async () => {
    await keys.create({ account: 'outbox-restricted', environment: 'live' });
    const account = (await findAccount(env.db, 'outbox-restricted'))!;
    expect(await changeRestriction(env.db, account, true)).toBe(true);
    expect(await changeRestriction(env.db, account, true)).toBe(false);
    expect(await changeRestriction(env.db, account, false)).toBe(true);
    const restricted = (await events('outbox-restricted')).filter((event) => event.type === 'account.restricted');
    expect(restricted.map((event) => event.environment).sort()).toEqual(['live', 'test']);
    expect((await findAccount(env.db, 'outbox-restricted'))!.restricted).toBe(false);
  });
});
