import { Webhook } from 'standardwebhooks';
import { createAccount, findAccount } from '../../shared/accounts/account.repository';
import { listAudit } from '../../shared/audit/audit.repository';
import { loadWorkerConfig } from '../../shared/config/config';
import { KeyService } from '../../shared/credentials/key.service';
import { createLogger } from '../../shared/logger/logger';
import { findEndpoint } from '../../shared/webhooks/endpoint.repository';
import { findDelivery, listDeliveries } from '../../shared/webhooks/delivery.repository';
import { SecretBox } from '../../shared/webhooks/secret-box';
import { WebhookEndpoints } from '../../shared/webhooks/webhook-endpoints.service';
import { pruneWebhooks } from '../../shared/webhooks/webhook-retention';
import { startWorker, type RunningWorker } from '../../worker/worker';
import { eventually, eventuallyEqual } from '../support/harness';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';
import { WebhookReceiver, type Received } from '../support/webhook-receiver';
import { capture } from '../support/cli';

/**
 * Deliveries through a real worker to a real HTTP receiver on loopback (allowed by
 * WEBHOOK_ALLOWED_ADDRESSES): signatures checked with the reference library, one webhook-id per
 * event across retries, tenant isolation, test events, redelivery, secret rotation, retention.
 */
let env: TestEnv;
let keys: KeyService;
let endpoints: WebhookEndpoints;
let worker: RunningWorker;
const receiver = new WebhookReceiver();
const OPERATOR = { name: 'operator (cli)', country: null };
// Everything the worker logs, at every level: no signing secret may appear in it.
const logs = capture();
const logger = createLogger('trace', 'test', logs.stream);
const secretsShown: string[] = [];

beforeAll(async () => {
  env = await createTestEnv();
  keys = new KeyService(env.db, TEST_SECRET);
  endpoints = new WebhookEndpoints({ db: env.db, box: new SecretBox(TEST_SECRET) });
  await receiver.listen();
  const config = loadWorkerConfig(
    env.processEnv({
      WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1/32',
      WEBHOOK_RELAY_INTERVAL: '100ms',
      WEBHOOK_RETRY_SCHEDULE: '200ms,400ms,800ms',
      WORKER_CONCURRENCY: '8',
    }),
  );
  worker = startWorker({ config, logger });
  await worker.ready;
});
afterAll(async () => {
  await worker.close();
  await receiver.close();
  await env.close();
});

const accountId = async (name: string) => (await findAccount(env.db, name))!.id;
const at = (path: string) => receiver.received.filter((request) => request.path === path);
const envelope = (request: Received) =>
  JSON.parse(request.body) as { type: string; environment: string; account: string; data: Record<string, unknown> };

/** Verifies a request as a customer would, with the reference library; returns the payload. */
function verified(request: Received, secret: string) {
  secretsShown.push(secret);
  return new Webhook(secret).verify(request.body, {
    'webhook-id': request.headers['webhook-id']!,
    'webhook-timestamp': request.headers['webhook-timestamp']!,
    'webhook-signature': request.headers['webhook-signature']!,
  });
}

describe('a delivery', () => {
  it('carries the envelope, signed per Standard Webhooks with the endpoint secret, its webhook-id the event id', async () => {
    await createAccount(env.db, 'wh-signed', 'starter');
    const id = await accountId('wh-signed');
    const { endpoint, secret } = await endpoints.add(
      { accountId: id, environment: 'live', url: receiver.url('/signed'), eventTypes: ['key.created', 'key.revoked'] },
      OPERATOR,
    );
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const issued = await keys.create({ account: 'wh-signed', environment: 'live', name: 'billing' });
    const [request] = await eventually(async () => at('/signed').length === 1 && at('/signed'));
    const payload = verified(request!, secret);
    expect(payload).toEqual({
      type: 'key.created',
      timestamp: issued.createdAt,
      environment: 'live',
      account: id,
      data: { key: { id: issued.id, name: 'billing', last4: issued.last4 }, scopes: issued.scopes, createdAt: issued.createdAt },
    });
    expect(request!.headers['webhook-id']).toMatch(/^msg_/);
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.body).not.toContain(issued.key);
    const deliveries = await eventuallyEqual(
      async () =>
        (await listDeliveries(env.db, { accountId: id, endpointId: endpoint.id, limit: 10 })).map((d) => [
          d.status,
          d.attempts,
          d.responseStatus,
        ]),
      [['succeeded', 1, 200]],
    );
    expect(deliveries).toHaveLength(1);
    // Counted in the worker's /metrics: attempts by outcome and their latency.
    const metrics = await worker.metrics.registry.metrics();
    expect(metrics).toMatch(/^cos_worker_webhook_deliveries_total\{outcome="succeeded"\} [1-9]/m);
    expect(metrics).toMatch(/^cos_worker_webhook_delivery_seconds_count [1-9]/m);
    // The secret is stored sealed, never as itself.
    const row = await env.db.selectFrom('webhook_endpoints').select('secret').where('id', '=', endpoint.id).executeTakeFirstOrThrow();
    expect(row.secret).toMatch(/^v1\./);
    expect(row.secret).not.toContain(secret.slice(6));
  });

  it('keeps one webhook-id over its retries while the receiver fails, until it succeeds', async () => {
    await createAccount(env.db, 'wh-retry', 'starter');
    const id = await accountId('wh-retry');
    const { endpoint, secret } = await endpoints.add(
      { accountId: id, environment: 'live', url: receiver.url('/retry'), eventTypes: ['key.created'] },
      OPERATOR,
    );
    receiver.answer = (request) => (request.path === '/retry' && at('/retry').length <= 2 ? { status: 503 } : { status: 200 });
    await keys.create({ account: 'wh-retry', environment: 'live' });
    await eventuallyEqual(
      async () => (await listDeliveries(env.db, { accountId: id, endpointId: endpoint.id, limit: 10 })).map((d) => [d.status, d.attempts]),
      [['succeeded', 3]],
    );
    receiver.answer = () => ({ status: 200 });
    const requests = at('/retry');
    expect(requests).toHaveLength(3);
    expect(new Set(requests.map((request) => request.headers['webhook-id'])).size).toBe(1);
    for (const request of requests) expect(verified(request, secret)).toMatchObject({ type: 'key.created' });
  });

  it('does not follow a redirect: a 3xx is a failure, and its Location is never visited', async () => {
    await createAccount(env.db, 'wh-redirect', 'starter');
    const id = await accountId('wh-redirect');
    const { endpoint } = await endpoints.add(
      { accountId: id, environment: 'test', url: receiver.url('/moved'), eventTypes: ['key.created'] },
      OPERATOR,
    );
    receiver.answer = (request) => (request.path === '/moved' ? { status: 302, location: receiver.url('/elsewhere') } : { status: 200 });
    await keys.create({ account: 'wh-redirect', environment: 'test' });
    const [delivery] = await eventually(async () => {
      const found = await listDeliveries(env.db, { accountId: id, endpointId: endpoint.id, limit: 10 });
      return found[0]?.status === 'failed' && found;
    }, 20_000);
    receiver.answer = () => ({ status: 200 });
    expect(delivery).toMatchObject({ attempts: 4, responseStatus: 302, lastError: 'redirect (302) not followed', nextAttemptAt: null });
    expect(at('/elsewhere')).toEqual([]);
  });
});

describe('tenant isolation', () => {
  it("sends an account's events to its own endpoints of the event's environment only", async () => {
    await createAccount(env.db, 'wh-tenant-a', 'starter');
    await createAccount(env.db, 'wh-tenant-b', 'starter');
    const [a, b] = [await accountId('wh-tenant-a'), await accountId('wh-tenant-b')];
    const add = (accountId: string, environment: 'test' | 'live', path: string) =>
      endpoints.add({ accountId, environment, url: receiver.url(path), eventTypes: ['key.created', 'key.deleted'] }, OPERATOR);
    await add(a, 'live', '/a-live');
    await add(a, 'test', '/a-test');
    await add(b, 'live', '/b-live');
    const disabled = await add(a, 'live', '/a-live-disabled');
    await endpoints.disable({ accountId: a, endpointId: disabled.endpoint.id }, OPERATOR);
    const live = await keys.create({ account: 'wh-tenant-a', environment: 'live' });
    await keys.create({ account: 'wh-tenant-a', environment: 'test' });
    await keys.delete(live.id);
    await eventually(async () => at('/a-live').length === 2 && at('/a-test').length === 1);
    // The relay has run past these events: nothing more is coming to the others.
    await eventually(async () => {
      const row = await env.db
        .selectFrom('webhook_events')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('relayed_at', 'is', null)
        .executeTakeFirstOrThrow();
      return Number(row.n) === 0;
    });
    // Deliveries run concurrently: no order is promised (the envelope's timestamp tells it).
    expect(
      at('/a-live')
        .map((request) => envelope(request).type)
        .sort(),
    ).toEqual(['key.created', 'key.deleted']);
    expect(at('/a-live').every((request) => envelope(request).environment === 'live' && envelope(request).account === a)).toBe(true);
    expect(at('/a-test').map((request) => [envelope(request).type, envelope(request).environment])).toEqual([['key.created', 'test']]);
    expect(at('/b-live')).toEqual([]);
    expect(at('/a-live-disabled')).toEqual([]);
    // Another account's endpoint is not found through this one's.
    await expect(endpoints.get({ accountId: b, endpointId: disabled.endpoint.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('test events and redelivery', () => {
  it('sends a test event to one endpoint, and redelivers a past delivery with the same body and webhook-id', async () => {
    await createAccount(env.db, 'wh-redeliver', 'starter');
    const id = await accountId('wh-redeliver');
    const { endpoint, secret } = await endpoints.add(
      { accountId: id, environment: 'test', url: receiver.url('/redeliver'), eventTypes: ['key.revoked'] },
      OPERATOR,
    );
    const test = await endpoints.sendTest({ accountId: id, endpointId: endpoint.id }, OPERATOR);
    expect(test).toMatchObject({ cause: 'test', status: 'pending', eventType: 'webhook.test' });
    const [first] = await eventually(async () => at('/redeliver').length === 1 && at('/redeliver'));
    expect(verified(first!, secret)).toMatchObject({ type: 'webhook.test', environment: 'test', account: id });
    await eventually(async () => (await findDelivery(env.db, { accountId: id, deliveryId: test.id }))?.status === 'succeeded');
    const again = await endpoints.redeliver({ accountId: id, deliveryId: test.id }, OPERATOR);
    expect(again).toMatchObject({ cause: 'redelivery', eventId: test.eventId });
    const requests = await eventually(async () => at('/redeliver').length === 2 && at('/redeliver'));
    expect(requests[1]!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(requests[1]!.body).toBe(first!.body);
    const audit = await listAudit(env.db, id, 10);
    expect(audit.map((entry) => entry.action)).toEqual(expect.arrayContaining(['webhook.create', 'webhook.test', 'webhook.redeliver']));
  });
});

describe('secret rotation', () => {
  it('signs with the new secret and, for the overlap, the previous one too', async () => {
    await createAccount(env.db, 'wh-rotate', 'starter');
    const id = await accountId('wh-rotate');
    const { endpoint, secret: oldSecret } = await endpoints.add(
      { accountId: id, environment: 'test', url: receiver.url('/rotate'), eventTypes: ['key.created'] },
      OPERATOR,
    );
    const { secret: newSecret, endpoint: rotated } = await endpoints.rotateSecret({ accountId: id, endpointId: endpoint.id }, OPERATOR);
    expect(newSecret).not.toBe(oldSecret);
    expect(Date.parse(rotated.previousSecretExpiresAt!) - Date.now()).toBeGreaterThan(23 * 3_600_000);
    await endpoints.sendTest({ accountId: id, endpointId: endpoint.id }, OPERATOR);
    const [request] = await eventually(async () => at('/rotate').length === 1 && at('/rotate'));
    expect(request!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(verified(request!, newSecret)).toMatchObject({ type: 'webhook.test' });
    expect(verified(request!, oldSecret)).toMatchObject({ type: 'webhook.test' });
  });
});

describe('retention', () => {
  it('deletes deliveries and relayed events older than the retention period, and keeps the rest', async () => {
    await createAccount(env.db, 'wh-retention', 'starter');
    const id = await accountId('wh-retention');
    const { endpoint } = await endpoints.add(
      { accountId: id, environment: 'test', url: receiver.url('/retention'), eventTypes: ['key.created'] },
      OPERATOR,
    );
    const old = await endpoints.sendTest({ accountId: id, endpointId: endpoint.id }, OPERATOR);
    await eventually(async () => (await findDelivery(env.db, { accountId: id, deliveryId: old.id }))?.status === 'succeeded');
    const longAgo = new Date(Date.now() - 31 * 86_400_000);
    await env.db.updateTable('webhook_deliveries').set({ created_at: longAgo }).where('id', '=', old.id).execute();
    await env.db.updateTable('webhook_events').set({ occurred_at: longAgo }).where('id', '=', old.eventId).execute();
    const recent = await endpoints.sendTest({ accountId: id, endpointId: endpoint.id }, OPERATOR);
    const pruned = await pruneWebhooks(env.db, Date.now(), 30 * 86_400_000);
    expect(pruned.deliveries).toBeGreaterThanOrEqual(1);
    expect(pruned.events).toBeGreaterThanOrEqual(1);
    expect(await findDelivery(env.db, { accountId: id, deliveryId: old.id })).toBeNull();
    expect(await findDelivery(env.db, { accountId: id, deliveryId: recent.id })).not.toBeNull();
    expect(await findEndpoint(env.db, { accountId: id, endpointId: endpoint.id })).not.toBeNull();
  });
});

describe('secrets in logs', () => {
  it('logs no signing secret, also when a secret cannot be read (a changed COS_SECRET)', async () => {
    const account = await createAccount(env.db, 'wh-logs', 'starter');
    const { endpoint, secret } = await endpoints.add(
      { accountId: account.id, environment: 'test', url: receiver.url('/logs'), eventTypes: ['key.created'] },
      OPERATOR,
    );
    secretsShown.push(secret);
    // Sealed under another COS_SECRET: what the worker finds after the secret was changed.
    const foreign = new SecretBox('another-secret-0123456789abcdef').seal(secret, endpoint.id);
    await env.db.updateTable('webhook_endpoints').set({ secret: foreign }).where('id', '=', endpoint.id).execute();
    const test = await endpoints.sendTest({ accountId: account.id, endpointId: endpoint.id }, OPERATOR);
    const failed = await eventually(async () => {
      const found = await findDelivery(env.db, { accountId: account.id, deliveryId: test.id });
      return found?.status === 'failed' && found;
    });
    expect(failed).toMatchObject({
      attempts: 1,
      lastError: 'the signing secret cannot be decrypted: was COS_SECRET changed since it was made?',
    });
    expect(at('/logs')).toEqual([]);
    expect(logs.text()).toContain('webhook signing secret unreadable');
    expect(secretsShown.length).toBeGreaterThan(5);
    for (const shown of new Set(secretsShown)) {
      expect(logs.text()).not.toContain(shown);
      expect(logs.text()).not.toContain(shown.slice('whsec_'.length));
    }
  });
});
