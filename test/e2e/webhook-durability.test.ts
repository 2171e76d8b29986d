import { Webhook } from 'standardwebhooks';
import { createAccount } from '../../shared/accounts/account.repository';
import { changeRestriction } from '../../shared/accounts/account-restriction';
import { KeyService } from '../../shared/credentials/key.service';
import { markRotationDue } from '../../shared/credentials/rotation-due';
import { listEvents } from '../../shared/webhooks/outbox.repository';
import { SUBSCRIBABLE_EVENT_TYPES } from '../../shared/webhooks/event-catalog';
import { SecretBox } from '../../shared/webhooks/secret-box';
import { WebhookEndpoints } from '../../shared/webhooks/webhook-endpoints.service';
import { eventually } from '../support/harness';
import { spawnBuilt, stop, type Spawned } from '../support/processes';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';
import { WebhookReceiver, type Received } from '../support/webhook-receiver';

/**
 * Built worker processes deliver to a real receiver across a receiver outage and a worker
 * killed (SIGKILL) with deliveries in flight: every event arrives at least once, each under one
 * webhook-id with one body, every signature valid for the reference library.
 */
let env: TestEnv;
const receiver = new WebhookReceiver();
const workers: Spawned[] = [];
beforeAll(async () => {
  env = await createTestEnv();
  await receiver.listen();
});
afterAll(async () => {
  await Promise.all(workers.map((worker) => stop(worker, 'SIGKILL')));
  await receiver.close();
  await env.close();
});

const startWorker = () => {
  const worker = spawnBuilt(
    'worker/main.js',
    env.processEnv({
      WORKER_BATCH_SIZE: '50',
      WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1/32',
      WEBHOOK_RELAY_INTERVAL: '100ms',
      WEBHOOK_RETRY_SCHEDULE: '300ms,600ms,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s',
      WEBHOOK_CONCURRENCY: '4',
    }),
  );
  workers.push(worker);
  return worker;
};

const verify = (request: Received, secret: string) =>
  new Webhook(secret).verify(request.body, {
    'webhook-id': request.headers['webhook-id']!,
    'webhook-timestamp': request.headers['webhook-timestamp']!,
    'webhook-signature': request.headers['webhook-signature']!,
  });

it('delivers every event at least once, one webhook-id each, across a receiver outage and a killed worker', async () => {
  const account = await createAccount(env.db, 'wh-durable', 'starter');
  const endpoints = new WebhookEndpoints({ db: env.db, box: new SecretBox(TEST_SECRET) });
  const { secret } = await endpoints.add(
    { accountId: account.id, environment: 'live', url: receiver.url('/durable'), eventTypes: SUBSCRIBABLE_EVENT_TYPES },
    { name: 'operator (cli)', country: null },
  );
  const keys = new KeyService(env.db, TEST_SECRET);

  // Phase 1: the receiver answers slowly, and the worker is killed while it waits on it.
  receiver.answer = () => ({ status: 200, delayMs: 1500 });
  const first = startWorker();
  const issued = [];
  for (let i = 0; i < 4; i++) issued.push(await keys.create({ account: 'wh-durable', environment: 'live', name: `k${i}` }));
  await eventually(async () => receiver.received.length >= 2, 30_000);
  first.child.kill('SIGKILL');
  await first.exited;

  // Phase 2: the receiver is down while more happens.
  await receiver.close();
  await keys.rotate(issued[0]!.id, 60_000);
  await keys.revoke(issued[1]!.id);
  await keys.delete(issued[2]!.id);
  await env.db
    .updateTable('api_keys')
    .set({ created_at: new Date(Date.now() - 91 * 86_400_000) })
    .where('id', '=', issued[3]!.id)
    .execute();
  await markRotationDue(env.db, Date.now());
  await changeRestriction(env.db, account, true);
  const second = startWorker();
  await eventually(async () => {
    const attempted = await env.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('account_id', '=', account.id)
      .where('attempts', '>', 0)
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow();
    return Number(attempted.n) >= 3;
  }, 30_000);

  // Phase 3: the receiver is back, answering at once.
  receiver.answer = () => ({ status: 200 });
  await receiver.listen();
  const events = await listEvents(env.db, account.id);
  const live = events.filter((event) => event.environment === 'live');
  expect(live.map((event) => event.type).sort()).toEqual([
    'account.restricted',
    'key.created',
    'key.created',
    'key.created',
    'key.created',
    'key.deleted',
    'key.revoked',
    'key.rotated',
    'key.rotation_due',
  ]);
  const statuses = async () =>
    (await env.db.selectFrom('webhook_deliveries').select('status').where('account_id', '=', account.id).execute()).map(
      (row) => row.status,
    );
  await eventually(async () => {
    const all = await statuses();
    return all.length === live.length && all.every((status) => status === 'succeeded');
  }, 60_000);
  await stop(second);

  const byId = new Map<string, Received[]>();
  for (const request of receiver.received)
    byId.set(request.headers['webhook-id']!, [...(byId.get(request.headers['webhook-id']!) ?? []), request]);
  expect([...byId.keys()].sort()).toEqual(live.map((event) => event.id).sort());
  for (const event of live) {
    const requests = byId.get(event.id)!;
    expect(new Set(requests.map((request) => request.body)).size).toBe(1);
    for (const request of requests)
      expect(verify(request, secret)).toMatchObject({ type: event.type, environment: 'live', account: account.id });
  }
  // The outage and the kill made some events arrive more than once, each time under their one id.
  expect(receiver.received.length).toBeGreaterThan(live.length);
});
