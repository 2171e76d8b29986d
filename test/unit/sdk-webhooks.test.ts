import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import express from 'express';
import fc from 'fast-check';
import { Webhook, WebhookVerificationError as ReferenceError } from 'standardwebhooks';
import { DEFAULT_WEBHOOK_TOLERANCE, verifyWebhook, WEBHOOK_EVENT_TYPES, WebhookVerificationError, type WebhookEvent } from '../../sdk/src';

/**
 * The SDK's webhook verification against the reference library `standardwebhooks`: what it signs
 * verifies, what it refuses is refused, on the real clock; and the fixture cases the Python SDK's
 * tests read are exactly what the reference library produces today.
 */
const FIXTURES = path.join(__dirname, '../../sdk-python/tests/fixtures');

interface FixtureCase {
  name: string;
  secret: string;
  headers: Record<string, string>;
  payload: string;
  now: number;
  tolerance?: number;
  expected: { event: WebhookEvent } | { reason: string };
  reference: { signatureVerified: boolean } | null;
}

const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;
const envelope = (type = 'key.created', account = 'acct_1') =>
  JSON.stringify({ type, timestamp: new Date().toISOString(), environment: 'live', account, data: { keyId: 'key_1' } });

/** A delivery as the sending side makes it: signed now (or `at`) with each secret, the newest first. */
function delivery(payload: string, secrets: string[], at = new Date(), id = 'msg_2Kx9test') {
  const signature = secrets.map((secret) => new Webhook(secret).sign(id, at, payload)).join(' ');
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature };
}

/** The SDK's refusal, or undefined when it accepted. */
function refusal(run: () => unknown): WebhookVerificationError | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error;
    throw error;
  }
}

/** The reason the SDK refuses with, or 'accepted'. */
const sdkVerdict = (run: () => unknown): string => refusal(run)?.reason ?? 'accepted';

function referenceVerdict(run: () => unknown): string {
  try {
    run();
    return 'accepted';
  } catch (error) {
    if (error instanceof ReferenceError) return 'refused';
    throw error;
  }
}

describe('verifyWebhook and the reference library, on the real clock', () => {
  const secret = newSecret();
  const oldSecret = newSecret();
  const payload = envelope();

  /** Both verdicts on one request: the SDK's reason (or 'accepted') and the reference's. */
  const both = (body: string, headers: Record<string, string>, withSecret = secret) => ({
    sdk: sdkVerdict(() => verifyWebhook({ payload: Buffer.from(body), headers, secret: withSecret })),
    reference: referenceVerdict(() => new Webhook(withSecret).verify(body, headers)),
  });

  it('accepts what the reference library signed, and returns the typed envelope', () => {
    const headers = delivery(payload, [secret]);
    const event = verifyWebhook({ payload: Buffer.from(payload), headers, secret });
    expect(event).toEqual(JSON.parse(payload));
    expect(event).toEqual(new Webhook(secret).verify(payload, headers));
    expect(WEBHOOK_EVENT_TYPES).toContain(event.type);
  });

  it('accepts either secret of a rotation (two signatures), and neither a third', () => {
    const headers = delivery(payload, [secret, oldSecret]);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(both(payload, headers, secret)).toEqual({ sdk: 'accepted', reference: 'accepted' });
    expect(both(payload, headers, oldSecret)).toEqual({ sdk: 'accepted', reference: 'accepted' });
    expect(both(payload, headers, newSecret())).toEqual({ sdk: 'NO_MATCHING_SIGNATURE', reference: 'refused' });
  });

  it('refuses a tampered body and a wrong secret, as the reference library does', () => {
    const headers = delivery(payload, [secret]);
    expect(both(envelope('key.created', 'acct_2'), headers)).toEqual({ sdk: 'NO_MATCHING_SIGNATURE', reference: 'refused' });
    expect(both(payload, headers, newSecret())).toEqual({ sdk: 'NO_MATCHING_SIGNATURE', reference: 'refused' });
  });

  it('refuses a timestamp more than 5 minutes old or ahead, as the reference library does', () => {
    const at = (seconds: number) => new Date(Date.now() + seconds * 1000);
    expect(DEFAULT_WEBHOOK_TOLERANCE).toBe(300);
    expect(both(payload, delivery(payload, [secret], at(-310)))).toEqual({ sdk: 'TIMESTAMP_TOO_OLD', reference: 'refused' });
    expect(both(payload, delivery(payload, [secret], at(310)))).toEqual({ sdk: 'TIMESTAMP_TOO_NEW', reference: 'refused' });
    expect(both(payload, delivery(payload, [secret], at(-290)))).toEqual({ sdk: 'accepted', reference: 'accepted' });
    // A longer tolerance is the receiver's choice; the reference library's is fixed.
    const verifyOld = (tolerance: number) => () =>
      verifyWebhook({ payload, headers: delivery(payload, [secret], at(-600)), secret, tolerance });
    expect(sdkVerdict(verifyOld(900))).toBe('accepted');
    expect(sdkVerdict(verifyOld(300))).toBe('TIMESTAMP_TOO_OLD');
  });

  it('refuses a request without one of the three headers, naming it', () => {
    const headers = delivery(payload, [secret]);
    for (const name of Object.keys(headers)) {
      const without = Object.fromEntries(Object.entries(headers).filter(([key]) => key !== name));
      expect(both(payload, without)).toEqual({ sdk: 'MISSING_HEADER', reference: 'refused' });
      expect(refusal(() => verifyWebhook({ payload, headers: without, secret }))).toMatchObject({ reason: 'MISSING_HEADER', header: name });
    }
  });

  it('reads a Fetch Headers, and Node request headers in any case', () => {
    const headers = delivery(payload, [secret]);
    expect(verifyWebhook({ payload, headers: new Headers(headers), secret })).toEqual(JSON.parse(payload));
    const shouting = Object.fromEntries(Object.entries(headers).map(([key, value]) => [key.toUpperCase(), value]));
    expect(verifyWebhook({ payload, headers: shouting, secret })).toEqual(JSON.parse(payload));
  });

  it('refuses a signed body that is not an event envelope, whose signature the reference library accepts', () => {
    const bodies = ['not json', '[1]', JSON.stringify({ type: 'key.created', environment: 'staging' })];
    for (const body of bodies) {
      const headers = delivery(body, [secret]);
      expect(sdkVerdict(() => verifyWebhook({ payload: body, headers, secret }))).toBe('INVALID_PAYLOAD');
      // The reference library checks the signature only (and parses JSON when asked to).
      expect(referenceVerdict(() => new Webhook(secret).verify(body, headers, { jsonParse: false }))).toBe('accepted');
    }
    expect(new Webhook(secret).verify('[1]', delivery('[1]', [secret]))).toEqual([1]);
  });

  it('refuses its caller’s mistakes with a TypeError that never shows the secret', () => {
    const headers = delivery(payload, [secret]);
    // What a JSON body parser leaves in req.body.
    expect(() => verifyWebhook({ payload: JSON.parse(payload), headers, secret })).toThrow(/raw request body/);
    expect(() => verifyWebhook({ payload, headers, secret: 'whsec_not base64!' })).toThrow(TypeError);
    expect(() => verifyWebhook({ payload, headers, secret: 'whsec_' })).toThrow(TypeError);
    expect(() => verifyWebhook({ payload, headers, secret, tolerance: -1 })).toThrow(TypeError);
    try {
      verifyWebhook({ payload, headers, secret: `${secret}!` });
    } catch (error) {
      expect(String(error)).not.toContain(secret.slice('whsec_'.length));
    }
    expect.assertions(5);
  });

  it('agrees with the reference library on any body and id: signed verifies, one changed byte does not', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.stringMatching(/^msg_[A-Za-z0-9]{1,30}$/), fc.nat(), (text, id, flipAt) => {
        const body = JSON.stringify({
          type: 'quota.threshold',
          timestamp: '2026-01-01T00:00:00.000Z',
          environment: 'test',
          account: text,
          data: {},
        });
        const headers = delivery(body, [secret], new Date(), id);
        expect(both(body, headers)).toEqual({ sdk: 'accepted', reference: 'accepted' });
        const bytes = Buffer.from(body);
        const at = flipAt % bytes.length;
        bytes[at] = bytes[at]! ^ 1;
        const changed = bytes.toString('utf8');
        expect(sdkVerdict(() => verifyWebhook({ payload: bytes, headers, secret }))).toBe('NO_MATCHING_SIGNATURE');
        // The reference library signs text: a byte that breaks the UTF-8 cannot be given to it alike.
        if (Buffer.from(changed).equals(bytes))
          expect(referenceVerdict(() => new Webhook(secret).verify(changed, headers))).toBe('refused');
      }),
      { numRuns: 300 },
    );
  });
});

describe('an Express receiver, as the README writes it', () => {
  const secret = newSecret();

  /** An app with the README's route: express.raw, then verifyWebhook; `json` puts a JSON body parser first. */
  async function post(payload: string, headers: Record<string, string>, json = false) {
    const app = express();
    if (json) app.use(express.json());
    const errors: unknown[] = [];
    app.post('/webhooks/cos', express.raw({ type: '*/*' }), (req, res) => {
      try {
        res.status(200).json(verifyWebhook({ payload: req.body, headers: req.headers, secret }));
      } catch (error) {
        errors.push(error);
        res.status(400).json({ refused: error instanceof WebhookVerificationError ? error.reason : 'TypeError' });
      }
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const response = await fetch(`http://127.0.0.1:${port}/webhooks/cos`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: payload,
      });
      return { status: response.status, body: (await response.json()) as unknown, errors };
    } finally {
      server.close();
    }
  }

  it('verifies a signed delivery from the raw body and Node request headers', async () => {
    const payload = JSON.stringify(JSON.parse(envelope('key.revoked')), null, 2); // whitespace a re-serialization would lose
    const answer = await post(payload, delivery(payload, [secret]));
    expect(answer).toEqual({ status: 200, body: JSON.parse(payload), errors: [] });
    const tampered = await post(payload.replace('acct_1', 'acct_9'), delivery(payload, [secret]));
    expect(tampered.body).toEqual({ refused: 'NO_MATCHING_SIGNATURE' });
  });

  it('refuses, as a TypeError, a body a JSON parser already took', async () => {
    const payload = envelope();
    const answer = await post(payload, delivery(payload, [secret]), true);
    expect(answer.body).toEqual({ refused: 'TypeError' });
    expect(String(answer.errors[0])).toMatch(/raw request body/);
  });
});

describe('the fixture cases both SDKs are tested with', () => {
  const committed = readFileSync(path.join(FIXTURES, 'webhook_cases.json'), 'utf8');
  const cases = JSON.parse(committed) as FixtureCase[];

  it('are what the reference library produces now (regenerate: node sdk-python/tests/fixtures/webhook-cases.mjs)', () => {
    const generated = spawnSync(process.execPath, [path.join(FIXTURES, 'webhook-cases.mjs'), '--print'], { encoding: 'utf8' });
    expect(generated.stderr).toBe('');
    expect(generated.stdout).toBe(committed);
  });

  it('cover rotation, tampering, a wrong secret, stale and future timestamps, and every event type', () => {
    const names = cases.map((entry) => entry.name).join('\n');
    for (const topic of ['rotation', 'tampered', 'wrong secret', 'stale', 'future', 'missing', 'not JSON']) expect(names).toContain(topic);
    for (const type of WEBHOOK_EVENT_TYPES) expect(names).toContain(`${type}, one signature`);
  });

  it.each(cases.map((entry) => [entry.name, entry] as const))('%s: the TypeScript SDK gives the expected verdict', (_name, entry) => {
    const verify = () =>
      verifyWebhook({
        payload: Buffer.from(entry.payload),
        headers: entry.headers,
        secret: entry.secret,
        tolerance: entry.tolerance,
        now: new Date(entry.now * 1000),
      });
    if ('event' in entry.expected) expect(verify()).toEqual(entry.expected.event);
    else expect(sdkVerdict(verify)).toBe(entry.expected.reason);
    // Headers, timestamp and signature: the same verdict as the reference library's (which checks no envelope).
    if (entry.reference) {
      const signatureVerified = 'event' in entry.expected || entry.expected.reason === 'INVALID_PAYLOAD';
      expect(signatureVerified).toBe(entry.reference.signatureVerified);
    }
  });
});
