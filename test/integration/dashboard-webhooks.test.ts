import { sql } from 'kysely';
import { listAudit } from '../../shared/audit/audit.repository';
import { KeyService } from '../../shared/credentials/key.service';
import { markRotationDue } from '../../shared/credentials/rotation-due';
import { createLogger } from '../../shared/logger/logger';
import { AddressGuard } from '../../shared/webhooks/address-guard';
import { listDeliveries } from '../../shared/webhooks/delivery.repository';
import { findEndpoint, listEndpoints, sealedSecrets } from '../../shared/webhooks/endpoint.repository';
import { SecretBox } from '../../shared/webhooks/secret-box';
import { attemptDelivery } from '../../shared/webhooks/webhook-delivery';
import type { DashboardDeps } from '../../dashboard/dependencies';
import { addUser, DashboardClient, startDashboardInProcess, type PageResponse } from '../support/dashboard';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';

/**
 * The webhook pages on a dashboard run in this process over real Postgres and Redis: owners add,
 * edit, disable, enable, delete and rotate endpoints (secrets shown once), send test events and
 * redeliver; viewers read; another account's endpoint is not found. The delivery worker's own
 * code disables an endpoint failing for 3 days, which the pages announce.
 */
let env: TestEnv;
let deps: DashboardDeps;
let closeDashboard: () => Promise<void>;
let url: string;
let acme: string;
let owner: DashboardClient;
let viewer: DashboardClient;
const now = Date.parse('2026-12-01T10:00:00.000Z');
const DAY = 86_400_000;
const RECEIVER = 'https://hooks.acme.example/cos';
const asJson = { Accept: 'application/json' };

beforeAll(async () => {
  env = await createTestEnv();
  ({ deps, url, close: closeDashboard } = await startDashboardInProcess(env, () => now));
  acme = await addUser(env.db, 'wh-acme', 'owner@wh.test', 'owner');
  await addUser(env.db, 'wh-acme', 'viewer@wh.test', 'viewer');
  owner = new DashboardClient(url, '193.0.6.139');
  viewer = new DashboardClient(url, '198.51.100.7');
  expect((await owner.signIn('owner@wh.test')).status).toBe(303);
  expect((await viewer.signIn('viewer@wh.test')).status).toBe(303);
});
afterAll(async () => {
  await closeDashboard();
  await env.close();
});

const shownSecret = (page: PageResponse | null) => /id="new-secret" readonly value="(whsec_[A-Za-z0-9+/=]+)"/.exec(page?.body ?? '')?.[1];
const endpoints = () => listEndpoints(env.db, acme);
const errorCode = (page: PageResponse) => (JSON.parse(page.body) as { error: { code: string } }).error.code;
const rows = (page: PageResponse, attribute: string) =>
  [...page.body.matchAll(new RegExp(`<tr ${attribute}="([^"]+)"`, 'g'))].map((m) => m[1]);

/** Adds an endpoint as the owner, from the test list's form; returns its id and the secret shown once. */
async function addEndpoint(target = RECEIVER, eventTypes = ['key.created', 'key.revoked']): Promise<{ id: string; secret: string }> {
  await owner.get('/webhooks/test');
  const { posted, page } = await owner.submit('/webhooks/test', { url: target, eventTypes });
  expect(posted).toMatchObject({ status: 303, location: '/webhooks/test' });
  const secret = shownSecret(page)!;
  expect(secret).toMatch(/^whsec_/);
  const created = (await endpoints()).filter((e) => e.url === target).at(-1)!;
  return { id: created.id, secret };
}

describe('webhook endpoints in the dashboard', () => {
  it('adds an endpoint for the environment shown: its secret once (the one that signs), then never; listed and audited', async () => {
    const { id, secret } = await addEndpoint();
    const stored = (await sealedSecrets(env.db, id))!;
    expect(new SecretBox(TEST_SECRET).open(stored.secret, id)).toBe(secret);
    const again = await owner.get('/webhooks/test');
    expect(again.body).not.toContain(secret);
    expect(again.body).not.toContain('id="new-secret"');
    expect(rows(again, 'data-endpoint-id')).toContain(id);
    expect(again.body).toContain('data-environment="test"');
    expect(again.body).toContain('never reaches a live endpoint');
    expect(again.headers.get('cache-control')).toBe('no-store');
    expect((await owner.get('/webhooks/live')).body).not.toContain(id);
    expect((await findEndpoint(env.db, { accountId: acme, endpointId: id }))!).toMatchObject({
      environment: 'test',
      eventTypes: ['key.created', 'key.revoked'],
    });
    expect(await listAudit(env.db, acme, 1)).toEqual([
      expect.objectContaining({ action: 'webhook.create', actor: 'owner@wh.test', environment: 'test', country: 'NL' }),
    ]);
  });

  it('adds once when the same form is sent twice, and says so', async () => {
    const before = (await endpoints()).length;
    await owner.get('/webhooks/test');
    const first = await owner.post('/webhooks/test', { url: 'https://twice.example/hook', eventTypes: 'key.deleted' });
    const second = await owner.post('/webhooks/test', { url: 'https://twice.example/hook', eventTypes: 'key.deleted' });
    expect(first).toMatchObject({ status: 303, location: '/webhooks/test' });
    expect(second).toMatchObject({ status: 303, location: '/webhooks/test?again=acted' });
    expect((await endpoints()).length).toBe(before + 1);
  });

  it('refuses a bad URL or no event type with 400 naming the field, the form filled in again, nothing added', async () => {
    const before = (await endpoints()).length;
    await owner.get('/webhooks/test');
    const bad = await owner.post('/webhooks/test', { url: 'ftp://files.example/x', eventTypes: 'key.created' });
    expect(bad.status).toBe(400);
    expect(bad.body).toContain('must start with https:// or http://');
    expect(bad.body).toContain('value="ftp://files.example/x"');
    const none = await owner.post('/webhooks/test', { url: RECEIVER }, asJson);
    expect(none.status).toBe(400);
    expect(errorCode(none)).toBe('VALIDATION_ERROR');
    expect((await endpoints()).length).toBe(before);
  });

  it('edits the URL and event types of an endpoint', async () => {
    const { id } = await addEndpoint('https://before.example/hook');
    await owner.get(`/webhooks/test/${id}`);
    const { posted, page } = await owner.submit(`/webhooks/test/${id}`, {
      url: 'https://after.example/hook',
      eventTypes: ['pattern.opened', 'quota.threshold'],
    });
    expect(posted).toMatchObject({ status: 303, location: `/webhooks/test/${id}?done=edited` });
    expect(page!.body).toContain('Endpoint saved.');
    expect(page!.body).toContain('https://after.example/hook');
    expect((await findEndpoint(env.db, { accountId: acme, endpointId: id }))!).toMatchObject({
      url: 'https://after.example/hook',
      eventTypes: ['pattern.opened', 'quota.threshold'],
    });

    // Refused: the endpoint's page again with the field at fault and what was typed; nothing changed.
    const refused = await owner.post(`/webhooks/test/${id}`, { url: 'https://user:pw@after.example/hook', eventTypes: 'key.created' });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('must not carry a user name or password');
    expect(refused.body).toContain('value="https://user:pw@after.example/hook"');
    expect((await findEndpoint(env.db, { accountId: acme, endpointId: id }))!.url).toBe('https://after.example/hook');
  });

  it('pages back through a long delivery log, 50 at a time', async () => {
    const { id } = await addEndpoint('https://paged.example/hook');
    const operator = { name: 'operator (cli)', country: null };
    for (let i = 0; i < 52; i++) await deps.webhooks.endpoints.sendTest({ accountId: acme, endpointId: id }, operator);
    const first = await owner.get(`/webhooks/test/${id}`);
    const newest = rows(first, 'data-delivery-id');
    expect(newest).toHaveLength(50);
    const older = new RegExp(`href="/webhooks/test/${id}\\?before=(dlv_[0-9A-Za-z]{20})">Older deliveries`).exec(first.body);
    expect(older?.[1]).toBe(newest.at(-1));
    const second = await owner.get(`/webhooks/test/${id}?before=${older![1]}`);
    const rest = rows(second, 'data-delivery-id');
    expect(rest).toHaveLength(2);
    expect(new Set([...newest, ...rest]).size).toBe(52);
    expect(second.body).not.toContain('Older deliveries');
    expect(second.body).toContain('Newest deliveries');
  });

  it('disables and enables an endpoint; a disabled one is said to be so, by whom, without the failing alarm', async () => {
    const { id } = await addEndpoint('https://toggle.example/hook');
    await owner.get(`/webhooks/test/${id}`);
    const disabled = await owner.submit(`/webhooks/test/${id}/disable`);
    expect(disabled.posted).toMatchObject({ status: 303, location: `/webhooks/test/${id}?done=disabled` });
    expect(disabled.page!.body).toContain('data-notice="webhook-disabled"');
    expect(disabled.page!.body).toContain('Disabled by owner@wh.test');
    expect(disabled.page!.body).not.toContain('webhook-auto-disabled');
    expect((await findEndpoint(env.db, { accountId: acme, endpointId: id }))!.enabled).toBe(false);
    const enabled = await owner.submit(`/webhooks/test/${id}/enable`);
    expect(enabled.posted).toMatchObject({ status: 303, location: `/webhooks/test/${id}?done=enabled` });
    expect(enabled.page!.body).not.toContain('data-notice="webhook-disabled"');
    expect((await findEndpoint(env.db, { accountId: acme, endpointId: id }))!.enabled).toBe(true);
    const actions = (await listAudit(env.db, acme, 2)).map((entry) => entry.action);
    expect(actions).toEqual(['webhook.enable', 'webhook.disable']);
  });

  it('deletes an endpoint from a confirmation page of its own', async () => {
    const { id } = await addEndpoint('https://delete.example/hook');
    const confirm = await owner.get(`/webhooks/test/${id}/delete`);
    expect(confirm.status).toBe(200);
    expect(confirm.body).toContain('data-confirm="delete"');
    expect(confirm.body).toContain(`action="/webhooks/test/${id}/delete"`);
    expect(await findEndpoint(env.db, { accountId: acme, endpointId: id })).not.toBeNull();
    const { posted, page } = await owner.submit(`/webhooks/test/${id}/delete`);
    expect(posted).toMatchObject({ status: 303, location: '/webhooks/test?done=deleted' });
    expect(page!.body).toContain('Endpoint deleted');
    expect(rows(page!, 'data-endpoint-id')).not.toContain(id);
    expect(await findEndpoint(env.db, { accountId: acme, endpointId: id })).toBeNull();
  });

  it('rotates the secret from a confirmation page: the new one shown once, the old one signing 24 h more', async () => {
    const { id, secret: old } = await addEndpoint('https://rotate.example/hook');
    const confirm = await owner.get(`/webhooks/test/${id}/rotate-secret`);
    expect(confirm.body).toContain('data-confirm="rotate-secret"');
    expect(confirm.body).toContain('keeps signing for 24 hours');
    const { posted, page } = await owner.submit(`/webhooks/test/${id}/rotate-secret`);
    expect(posted).toMatchObject({ status: 303, location: `/webhooks/test/${id}` });
    const secret = shownSecret(page)!;
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(old);
    expect(page!.body).toContain('Signing secret rotated.');
    expect(page!.body).toMatch(/keeps signing too until\s+<strong>2026-12-02 10:00 UTC<\/strong>/);
    const box = new SecretBox(TEST_SECRET);
    const stored = (await sealedSecrets(env.db, id))!;
    expect([box.open(stored.secret, id), box.open(stored.previousSecret!, id)]).toEqual([secret, old]);
    expect(stored.previousSecretExpiresAt!.getTime()).toBe(now + DAY);
    const reloaded = await owner.get(`/webhooks/test/${id}`);
    expect(reloaded.body).not.toContain(secret);
    expect(reloaded.body).toContain('signs too until 2026-12-02 10:00 UTC');
  });

  it('sends a test event, shown in the delivery log with its webhook-id, and redelivers it with the same webhook-id', async () => {
    const { id } = await addEndpoint('https://log.example/hook');
    await owner.get(`/webhooks/test/${id}`);
    const tested = await owner.submit(`/webhooks/test/${id}/test`);
    expect(tested.posted).toMatchObject({ status: 303, location: `/webhooks/test/${id}?done=test` });
    const [delivery] = await listDeliveries(env.db, { accountId: acme, endpointId: id, limit: 10 });
    expect(delivery).toMatchObject({ eventType: 'webhook.test', cause: 'test', status: 'pending', attempts: 0 });
    expect(rows(tested.page!, 'data-delivery-id')).toEqual([delivery!.id]);
    expect(tested.page!.body).toContain(`<code>${delivery!.eventId}</code>`);
    expect(tested.page!.body).toContain('Test event sent');

    const redelivered = await owner.submit(`/webhooks/test/${id}/deliveries/${delivery!.id}/redeliver`);
    expect(redelivered.posted).toMatchObject({ status: 303, location: `/webhooks/test/${id}?done=redelivered` });
    const log = await listDeliveries(env.db, { accountId: acme, endpointId: id, limit: 10 });
    expect(log.map((d) => [d.cause, d.eventId])).toEqual([
      ['redelivery', delivery!.eventId],
      ['test', delivery!.eventId],
    ]);
    expect(rows(redelivered.page!, 'data-delivery-id')).toEqual(log.map((d) => d.id));
    expect((await listAudit(env.db, acme, 2)).map((entry) => entry.action)).toEqual(['webhook.redeliver', 'webhook.test']);

    // A delivery of another endpoint, under this endpoint's address, is not found.
    const other = await addEndpoint('https://log-other.example/hook');
    await owner.get(`/webhooks/test/${other.id}`);
    const elsewhere = await owner.post(`/webhooks/test/${other.id}/deliveries/${delivery!.id}/redeliver`, {}, asJson);
    expect(elsewhere.status).toBe(404);
    expect((await listDeliveries(env.db, { accountId: acme, endpointId: id, limit: 10 })).length).toBe(2);
  });

  it('lets a viewer read the endpoints and their logs but change nothing: no forms, and 403', async () => {
    const { id } = await addEndpoint('https://viewer.example/hook');
    const list = await viewer.get('/webhooks/test');
    expect(rows(list, 'data-endpoint-id')).toContain(id);
    expect(list.body).toContain('read-only access');
    expect(list.body).not.toContain('action="/webhooks/test"');
    const page = await viewer.get(`/webhooks/test/${id}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('Deliveries');
    expect(page.body).not.toContain('Send a test event');
    expect(page.body).not.toContain('/redeliver');
    for (const path of [`/webhooks/test/${id}/delete`, `/webhooks/test/${id}/rotate-secret`]) {
      expect((await viewer.get(path)).status).toBe(403);
    }
    const posts: [string, Record<string, string>][] = [
      ['/webhooks/test', { url: 'https://by-viewer.example/hook', eventTypes: 'key.created' }],
      [`/webhooks/test/${id}`, { url: 'https://by-viewer.example/hook', eventTypes: 'key.created' }],
      ...['disable', 'test', 'rotate-secret', 'delete'].map((action): [string, Record<string, string>] => [
        `/webhooks/test/${id}/${action}`,
        {},
      ]),
    ];
    const before = await endpoints();
    for (const [path, fields] of posts) {
      const res = await viewer.post(path, fields, asJson);
      expect(res.status).toBe(403);
      expect(errorCode(res)).toBe('FORBIDDEN');
    }
    expect(await endpoints()).toEqual(before);
    expect(await listDeliveries(env.db, { accountId: acme, endpointId: id, limit: 10 })).toEqual([]);
  });

  it("treats another account's endpoint, or one of the other environment, as not found and leaves it alone", async () => {
    const otherAccount = await addUser(env.db, 'wh-other', 'owner@other.test', 'owner');
    const { endpoint: theirs } = await deps.webhooks.endpoints.add(
      { accountId: otherAccount, environment: 'test', url: 'https://theirs.example/hook', eventTypes: ['key.created'] },
      { name: 'operator (cli)', country: null },
    );
    const { id: ours } = await addEndpoint('https://ours.example/hook');
    for (const path of [`/webhooks/test/${theirs.id}`, `/webhooks/test/${theirs.id}/delete`, `/webhooks/live/${ours}`]) {
      const res = await owner.get(path, asJson);
      expect(res.status).toBe(404);
      expect(errorCode(res)).toBe('NOT_FOUND');
    }
    await owner.get('/webhooks/test');
    for (const action of ['disable', 'test', 'rotate-secret', 'delete']) {
      const res = await owner.post(`/webhooks/test/${theirs.id}/${action}`, {}, asJson);
      expect(res.status).toBe(404);
    }
    expect(
      (await owner.post(`/webhooks/test/${theirs.id}`, { url: 'https://mine.example', eventTypes: 'key.created' }, asJson)).status,
    ).toBe(404);
    expect((await owner.post(`/webhooks/live/${ours}/disable`, {}, asJson)).status).toBe(404);
    expect(await findEndpoint(env.db, { accountId: otherAccount, endpointId: theirs.id })).toEqual(theirs);
    expect((await findEndpoint(env.db, { accountId: acme, endpointId: ours }))!.enabled).toBe(true);
    expect((await owner.get('/webhooks/test')).body).not.toContain(theirs.id);
  });
});

describe('an endpoint disabled for failing', () => {
  it('is announced on the webhooks page and its own page, with the reason and when, as the delivery worker left it', async () => {
    const { id } = await addEndpoint('http://127.0.0.1:9/failing');
    await owner.get(`/webhooks/test/${id}`);
    await owner.post(`/webhooks/test/${id}/test`);
    const [delivery] = await listDeliveries(env.db, { accountId: acme, endpointId: id, limit: 1 });
    // The worker's own attempt code, its receiver answering 500 once a day until 3 days of failures.
    let clock = Date.parse('2026-12-01T00:00:00.000Z');
    const attempt = () =>
      attemptDelivery(
        {
          db: env.db,
          box: new SecretBox(TEST_SECRET),
          guard: new AddressGuard(['127.0.0.1/32']),
          schedule: [DAY, DAY, DAY, DAY, DAY],
          disableAfterMs: 3 * DAY,
          timeoutMs: 1000,
          clock: () => clock,
          logger: createLogger('silent', 'test'),
          send: async () => ({ ok: false, status: 500, latencyMs: 12, error: 'answered 500' }),
        },
        delivery!.id,
      );
    let attempts = 0;
    while ((await findEndpoint(env.db, { accountId: acme, endpointId: id }))!.enabled) {
      expect(attempts).toBeLessThan(5);
      expect((await attempt()).kind).toBe(attempts < 3 ? 'retry' : 'settled');
      attempts += 1;
      clock += DAY;
    }
    expect(attempts).toBe(4);

    for (const path of ['/webhooks/test', `/webhooks/test/${id}`]) {
      const page = await owner.get(path);
      const notice = /<div class="notice error" role="alert" data-notice="webhook-auto-disabled"[^>]*>([\s\S]*?)<\/div>/.exec(page.body);
      expect(notice).not.toBeNull();
      expect(notice![1]).toContain('http://127.0.0.1:9/failing');
      expect(notice![1]).toContain('was disabled automatically');
      expect(notice![1]).toContain('on 2026-12-04 00:00 UTC');
      expect(notice![1]).toContain('Disabled after failing for 3 days');
    }
    const log = await owner.get(`/webhooks/test/${id}`);
    expect(log.body).toContain('<td data-label="Response">500</td>');
    expect(log.body).toContain('<td data-label="Attempts">4</td>');
    expect(log.body).toContain('<td data-label="Latency">12 ms</td>');
    expect((await owner.get('/webhooks/live')).body).not.toContain('webhook-auto-disabled');
  });
});

describe('the keys list', () => {
  it('marks a live key the daily scan found due for rotation, and not a young one nor one rotated out', async () => {
    const keys = new KeyService(env.db, TEST_SECRET);
    const old = await keys.create({ account: 'wh-acme', environment: 'live', name: 'old key' });
    const rotated = await keys.create({ account: 'wh-acme', environment: 'live', name: 'rotated key' });
    const young = await keys.create({ account: 'wh-acme', environment: 'live', name: 'young key' });
    await sql`update api_keys set created_at = now() - interval '91 days' where id in (${old.id}, ${rotated.id})`.execute(env.db);
    expect(await markRotationDue(env.db, Date.now())).toBe(2);
    const replacement = await keys.rotate(rotated.id, 3_600_000);

    const page = await owner.get('/keys/live');
    const row = (keyId: string) => new RegExp(`<tr data-key-id="${keyId}"[\\s\\S]*?</tr>`).exec(page.body)![0];
    expect(row(old.id)).toContain('data-rotation-due');
    expect(row(old.id)).toContain('rotation due');
    expect(row(rotated.id)).not.toContain('data-rotation-due');
    expect(row(replacement.id)).not.toContain('data-rotation-due');
    expect(row(young.id)).not.toContain('data-rotation-due');
  });
});
