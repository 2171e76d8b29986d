import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { findAccount } from '../../shared/accounts/account.repository';
import type { Db } from '../../shared/db/database';
import { recordEvent } from '../../shared/webhooks/outbox.repository';
import { SUBSCRIBABLE_EVENT_TYPES } from '../../shared/webhooks/event-catalog';
import { SecretBox } from '../../shared/webhooks/secret-box';
import { WebhookEndpoints } from '../../shared/webhooks/webhook-endpoints.service';

/** What bench:worker --webhooks ran beside the outcome backlog. */
export interface WebhookLoadReport {
  eventsRecorded: number;
  requestsReceived: number;
  receiverDelayMs: number;
}

/**
 * bench:worker --webhooks: webhooks on while the backlog is applied, with the worst receiver —
 * one that answers each delivery only after `delayMs` — and events recorded into the outbox at
 * `eventsPerSecond` the whole time, so the webhooks queue is full and its Worker busy. What the
 * bench measures is whether the outcomes' rate holds beside it.
 */
export async function startWebhookLoad(input: {
  db: Db;
  account: string;
  secret: string;
  eventsPerSecond: number;
  delayMs: number;
}): Promise<{ env: Record<string, string>; stop: () => Promise<WebhookLoadReport> }> {
  let received = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received += 1;
      setTimeout(() => res.end('ok'), input.delayMs).unref();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const account = (await findAccount(input.db, input.account))!;
  const endpoints = new WebhookEndpoints({ db: input.db, box: new SecretBox(input.secret) });
  await endpoints.add(
    { accountId: account.id, environment: 'test', url: `http://127.0.0.1:${port}/bench`, eventTypes: SUBSCRIBABLE_EVENT_TYPES },
    { name: 'bench', country: null },
  );
  let recorded = 0;
  const timer = setInterval(() => {
    void recordEvent(input.db, {
      accountId: account.id,
      environment: 'test',
      type: 'key.created',
      data: { key: { id: `key_bench${recorded}`, name: 'bench', last4: 'abcd' }, scopes: ['context'], createdAt: new Date().toISOString() },
      occurredAt: new Date(),
    }).then(() => (recorded += 1));
  }, 1000 / input.eventsPerSecond);
  return {
    env: { WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1/32' },
    stop: async () => {
      clearInterval(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      return { eventsRecorded: recorded, requestsReceived: received, receiverDelayMs: input.delayMs };
    },
  };
}
