import { createAccount } from '../../shared/accounts/account.repository';
import { listAudit } from '../../shared/audit/audit.repository';
import { findDelivery } from '../../shared/webhooks/delivery.repository';
import { runCliCaptured } from '../support/cli';
import { createTestEnv, type TestEnv } from '../support/test-env';

/** The operator's webhook commands, through the shared endpoints service, audited as the operator's. */
let env: TestEnv;
let accountId: string;
beforeAll(async () => {
  env = await createTestEnv();
  accountId = (await createAccount(env.db, 'wh-cli', 'pro')).id;
  await createAccount(env.db, 'wh-cli-other', 'pro');
});
afterAll(() => env.close());

const cli = (...argv: string[]) => runCliCaptured(argv, env.processEnv());
const json = async (...argv: string[]) => {
  const result = await cli(...argv, '--json');
  expect(result).toMatchObject({ code: 0, err: '' });
  return JSON.parse(result.out);
};

describe('cos webhooks', () => {
  it('adds an endpoint, printing its secret once, then lists, edits, disables, enables, rotates and deletes it', async () => {
    const added = await json(
      'webhooks',
      'add',
      '--account',
      'wh-cli',
      '--env',
      'live',
      '--url',
      'https://hooks.example.com/cos',
      '--events',
      'key.created,quota.threshold',
    );
    expect(added).toMatchObject({
      environment: 'live',
      url: 'https://hooks.example.com/cos',
      eventTypes: ['key.created', 'quota.threshold'],
      enabled: true,
    });
    expect(added.secret).toMatch(/^whsec_/);
    const listed = await json('webhooks', 'list', '--account', 'wh-cli');
    expect(listed.data).toHaveLength(1);
    expect(JSON.stringify(listed)).not.toContain(added.secret);

    const edited = await json('webhooks', 'edit', added.id, '--account', 'wh-cli', '--events', 'key.revoked');
    expect(edited.eventTypes).toEqual(['key.revoked']);
    expect(await json('webhooks', 'disable', added.id, '--account', 'wh-cli')).toMatchObject({
      enabled: false,
      disabledReason: 'Disabled by operator (cli)',
    });
    expect(await json('webhooks', 'enable', added.id, '--account', 'wh-cli')).toMatchObject({ enabled: true, disabledReason: null });
    const rotated = await json('webhooks', 'rotate-secret', added.id, '--account', 'wh-cli');
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(added.secret);
    expect(Date.parse(rotated.previousSecretExpiresAt)).toBeGreaterThan(Date.now());

    const text = await cli('webhooks', 'list', '--account', 'wh-cli');
    expect(text.out).toContain(`${added.id}  live  enabled  https://hooks.example.com/cos  [key.revoked]`);
    expect(await json('webhooks', 'delete', added.id, '--account', 'wh-cli')).toMatchObject({ id: added.id });
    expect((await json('webhooks', 'list', '--account', 'wh-cli')).data).toEqual([]);

    const actions = (await listAudit(env.db, accountId, 20)).map((entry) => [entry.action, entry.actor, entry.subject]);
    expect(actions.reverse()).toEqual(
      ['webhook.create', 'webhook.update', 'webhook.disable', 'webhook.enable', 'webhook.rotate-secret', 'webhook.delete'].map((action) => [
        action,
        'operator (cli)',
        'https://hooks.example.com/cos',
      ]),
    );
  });

  it('queues a test event and a redelivery, and prints the delivery log', async () => {
    const added = await json('webhooks', 'add', '--account', 'wh-cli', '--env', 'test', '--url', 'https://hooks.example.com/test');
    expect(added.eventTypes).not.toContain('webhook.test');
    const test = await json('webhooks', 'test', added.id, '--account', 'wh-cli');
    expect(test).toMatchObject({ cause: 'test', status: 'pending', eventType: 'webhook.test' });
    const again = await json('webhooks', 'redeliver', test.id, '--account', 'wh-cli');
    expect(again).toMatchObject({ cause: 'redelivery', eventId: test.eventId });
    const log = await json('webhooks', 'deliveries', added.id, '--account', 'wh-cli');
    expect(log.data.map((d: { id: string }) => d.id)).toEqual([again.id, test.id]);
    expect(await findDelivery(env.db, { accountId, deliveryId: again.id })).toMatchObject({ status: 'pending', attempts: 0 });
  });

  it("refuses a bad URL or event type, and another account's endpoint, with one line each", async () => {
    const bad = await cli('webhooks', 'add', '--account', 'wh-cli', '--env', 'live', '--url', 'ftp://example.com/');
    expect(bad).toMatchObject({ code: 1, err: 'cos webhooks add: Invalid url: must start with https:// or http://\n' });
    const type = await cli(
      'webhooks',
      'add',
      '--account',
      'wh-cli',
      '--env',
      'live',
      '--url',
      'https://example.com/',
      '--events',
      'key.exploded',
    );
    expect(type.code).toBe(1);
    expect(type.err).toMatch(/^cos webhooks add: Invalid eventTypes: /);
    const added = await json('webhooks', 'add', '--account', 'wh-cli', '--env', 'live', '--url', 'https://example.com/mine');
    const other = await cli('webhooks', 'disable', added.id, '--account', 'wh-cli-other');
    expect(other).toMatchObject({ code: 1, err: `cos webhooks disable: No webhook endpoint ${added.id} in this account\n` });
  });
});
