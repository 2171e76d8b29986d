import { Webhook } from 'standardwebhooks';
import { createAccount, type Account } from '../../shared/accounts/account.repository';
import { listAudit } from '../../shared/audit/audit.repository';
import { createLogger } from '../../shared/logger/logger';
import { findDelivery, insertDelivery } from '../../shared/webhooks/delivery.repository';
import { findEndpoint } from '../../shared/webhooks/endpoint.repository';
import { recordEvent } from '../../shared/webhooks/outbox.repository';
import { AddressGuard, type ResolvedAddress } from '../../shared/webhooks/address-guard';
import { SecretBox } from '../../shared/webhooks/secret-box';
import { attemptDelivery, type DeliveryDeps } from '../../shared/webhooks/webhook-delivery';
import { WebhookEndpoints } from '../../shared/webhooks/webhook-endpoints.service';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * A delivery's failures, attempt by attempt on a clock the test moves: refused addresses (an
 * injected resolver; no socket to a private address is opened), the time-out, and an endpoint
 * disabled after failing for three days, time the worker was paused not counted.
 */
let env: TestEnv;
let endpoints: WebhookEndpoints;
const box = new SecretBox(TEST_SECRET);
const receiver = new WebhookReceiver();
const OPERATOR = { name: 'operator (cli)', country: null };
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
let now = Date.UTC(2026, 10, 2, 9);
const resolved: string[] = [];
/** The test's DNS: *.test names the test decides; a private answer for internal.example.com. */
const answers: Record<string, ResolvedAddress[]> = {
  'internal.example.com': [{ address: '10.0.0.8', family: 4 }],
  'metadata.example.com': [{ address: '169.254.169.254', family: 4 }],
  'mapped.example.com': [{ address: '::ffff:192.168.0.10', family: 6 }],
  'receiver.test': [{ address: '127.0.0.1', family: 4 }],
};

function deps(overrides: Partial<DeliveryDeps> = {}): DeliveryDeps {
  return {
    db: env.db,
    box,
    guard: new AddressGuard(['127.0.0.1/32'], async (hostname) => {
      resolved.push(hostname);
      const found = answers[hostname];
      if (!found) throw new Error(`ENOTFOUND ${hostname}`);
      return found;
    }),
    schedule: Array.from({ length: 10 }, () => 12 * HOUR),
    disableAfterMs: 3 * DAY,
    timeoutMs: 2000,
    clock: () => now,
    logger: createLogger('silent', 'test'),
    ...overrides,
  };
}

beforeAll(async () => {
  env = await createTestEnv();
  endpoints = new WebhookEndpoints({ db: env.db, box, clock: () => now });
  await receiver.listen();
});
afterAll(async () => {
  await receiver.close();
  await env.close();
});

let accounts = 0;
async function endpointAt(url: string): Promise<{ account: Account; endpointId: string; secret: string }> {
  const account = await createAccount(env.db, `wh-failures-${(accounts += 1)}`, 'starter');
  const { endpoint, secret } = await endpoints.add(
    { accountId: account.id, environment: 'live', url, eventTypes: ['key.created'] },
    OPERATOR,
  );
  return { account, endpointId: endpoint.id, secret };
}

/** A key.created event of the account and its delivery to the endpoint, as the relay makes them. */
async function delivery(account: Account, endpointId: string): Promise<string> {
  return env.db.transaction().execute(async (tx) => {
    const eventId = await recordEvent(tx, {
      accountId: account.id,
      environment: 'live',
      type: 'key.created',
      data: { key: { id: 'key_x', name: 'x', last4: 'abcd' }, scopes: ['context'], createdAt: new Date(now).toISOString() },
      occurredAt: new Date(now),
    });
    return insertDelivery(tx, { eventId, endpointId, accountId: account.id, cause: 'event' });
  });
}

describe('refused addresses', () => {
  it.each([
    'http://internal.example.com/hook',
    'http://metadata.example.com/latest',
    'http://mapped.example.com/',
    'http://10.0.0.1/',
    'http://[fd00::1]/',
  ])('refuses %s after resolving it, records why and retries on the schedule', async (url) => {
    const { account, endpointId } = await endpointAt(url);
    const id = await delivery(account, endpointId);
    expect(await attemptDelivery(deps(), id)).toEqual({ kind: 'retry', delayMs: 12 * HOUR });
    const recorded = await findDelivery(env.db, { accountId: account.id, deliveryId: id });
    expect(recorded).toMatchObject({ status: 'pending', attempts: 1, responseStatus: null });
    expect(recorded!.lastError).toMatch(/^refused: .*private, loopback or link-local/);
  });

  it('connects to the address it checked, keeping the host name in Host (a custom lookup, no second resolution)', async () => {
    now = Date.now(); // the reference library checks the signed timestamp against the real clock
    const { account, endpointId, secret } = await endpointAt(`http://receiver.test:${receiver.port}/pinned`);
    const id = await delivery(account, endpointId);
    resolved.length = 0;
    expect(await attemptDelivery(deps(), id)).toEqual({ kind: 'settled', status: 'succeeded' });
    expect(resolved).toEqual(['receiver.test']);
    const request = receiver.received.find((r) => r.path === '/pinned')!;
    expect(request.headers.host).toBe(`receiver.test:${receiver.port}`);
    expect(new Webhook(secret).verify(request.body, request.headers)).toMatchObject({ type: 'key.created' });
  });
});

describe('time-out', () => {
  it('gives up on a receiver that does not answer in time, and counts it a failure', async () => {
    const { account, endpointId } = await endpointAt(receiver.url('/slow'));
    receiver.answer = (request) => (request.path === '/slow' ? { status: 200, delayMs: 5000 } : { status: 200 });
    const id = await delivery(account, endpointId);
    expect(await attemptDelivery(deps({ timeoutMs: 300 }), id)).toEqual({ kind: 'retry', delayMs: 12 * HOUR });
    receiver.answer = () => ({ status: 200 });
    expect(await findDelivery(env.db, { accountId: account.id, deliveryId: id })).toMatchObject({
      responseStatus: null,
      lastError: 'no answer within 300 ms',
    });
  });
});

describe('the three-day disable', () => {
  it('disables an endpoint failing for three days of scheduled retries, not counting a pause of the worker', async () => {
    const { account, endpointId } = await endpointAt(receiver.url('/down'));
    receiver.answer = (request) => (request.path === '/down' ? { status: 500 } : { status: 200 });
    const id = await delivery(account, endpointId);
    const steps: unknown[] = [];
    for (let attempt = 1; attempt <= 10; attempt++) {
      const step = await attemptDelivery(deps(), id);
      steps.push(step);
      if (step.kind !== 'retry') break;
      // Between the 3rd and 4th attempts the worker was paused for 5 days (an outage of ours).
      now += attempt === 3 ? 5 * DAY : step.delayMs;
    }
    receiver.answer = () => ({ status: 200 });
    // Failing time: 0, 12h, 24h, then 36h (12h of the 5 days counted), 48h, 60h, 72h: the 7th attempt disables it.
    expect(steps).toHaveLength(7);
    expect(steps.at(-1)).toEqual({ kind: 'settled', status: 'failed' });
    const endpoint = (await findEndpoint(env.db, { accountId: account.id, endpointId }))!;
    expect(endpoint).toMatchObject({ enabled: false, failingMs: 3 * DAY, disabledAt: new Date(now).toISOString() });
    expect(endpoint.disabledReason).toBe('Disabled after failing for 3 days (last attempt: answered 500)');
    expect(await findDelivery(env.db, { accountId: account.id, deliveryId: id })).toMatchObject({
      status: 'failed',
      attempts: 7,
      responseStatus: 500,
      nextAttemptAt: null,
    });
    const audit = await listAudit(env.db, account.id, 10);
    expect(audit[0]).toMatchObject({ action: 'webhook.auto-disable', actor: 'webhook delivery', subject: receiver.url('/down') });
    // A later event's delivery to the disabled endpoint is cancelled, not attempted.
    const before = receiver.received.length;
    const later = await delivery(account, endpointId);
    expect(await attemptDelivery(deps(), later)).toEqual({ kind: 'settled', status: 'cancelled' });
    expect(receiver.received.length).toBe(before);
    // Enabled again by its owner, it starts afresh.
    expect(await endpoints.enable({ accountId: account.id, endpointId }, OPERATOR)).toMatchObject({
      enabled: true,
      failingMs: null,
      disabledReason: null,
    });
  });

  it('starts counting afresh after a success', async () => {
    const { account, endpointId } = await endpointAt(receiver.url('/flaky'));
    let failing = true;
    receiver.answer = (request) => (request.path === '/flaky' && failing ? { status: 502 } : { status: 200 });
    const first = await delivery(account, endpointId);
    for (let attempt = 1; attempt <= 5; attempt++) {
      const step = await attemptDelivery(deps(), first);
      if (step.kind === 'retry') now += step.delayMs;
    }
    expect((await findEndpoint(env.db, { accountId: account.id, endpointId }))!.failingMs).toBe(48 * HOUR);
    failing = false;
    expect(await attemptDelivery(deps(), first)).toEqual({ kind: 'settled', status: 'succeeded' });
    receiver.answer = () => ({ status: 200 });
    expect((await findEndpoint(env.db, { accountId: account.id, endpointId }))!).toMatchObject({ enabled: true, failingMs: null });
  });
});
