import { EventEmitter } from 'node:events';
import type { Response } from 'express';
import { Admission, type AdmissionDeps } from '../../api/middleware/rate-limit.middleware';
import type { KeyCredential } from '../../shared/credentials/key.repository';
import type { LimitDecision } from '../../shared/limits/limiter';
import type { LeasedAdmission } from '../../shared/limits/admission-leases';
import type { FreshRead } from '../../shared/profile/profile-cache.repository';
import { createLogger } from '../../shared/logger/logger';

/**
 * A live context call's limit settled with its profile read (Admission.withRead): the headers,
 * the refusal, and the metering of a request whose read failed — with the limiter and its
 * combined read standing in as plain objects (the Redis side is tested in integration).
 */
const credential = { id: 'key_1', plan: 'starter', rateLimitRps: null, environment: 'live' } as unknown as KeyCredential;
const admitted: LimitDecision = { allowed: true, limit: 10, remaining: 9, resetAt: 1_800_000_001, meteredAt: 1_800_000_000_000 };
const refused: LimitDecision = { allowed: false, scope: 'second', limit: 10, resetAt: 1_800_000_001, retryAfter: 1 };
const read: FreshRead = { claim: undefined, keys: ['p', 'q'], args: [0, '', '', ''], read: () => ({ profile: null, pending: 0 }) };

/** Where the limiter's and the limited read's stubs keep their call's handler of a late limiter decision. */
const late: { current?: (decision: LimitDecision) => void } = {};

function setup(
  decision: LimitDecision,
  readError?: Error,
  leased?: LeasedAdmission | Promise<LeasedAdmission | undefined>,
  limiterError?: Error,
) {
  const reclassified: string[] = [];
  late.current = undefined;
  const leaseMoves: string[] = [];
  const readsAlone: FreshRead[] = [];
  const admittedWays: string[] = [];
  const rejected: string[] = [];
  const res = Object.assign(new EventEmitter(), { headers: {} as Record<string, string>, headersSent: false, statusCode: 200 });
  const response = Object.assign(res, {
    set: (headers: Record<string, string>) => Object.assign(res.headers, headers),
  }) as unknown as Response;
  const deps = {
    limiter: {
      prepare: () => ({ meteredAt: 1_800_000_000_000 }),
      send: async (_call: unknown, onLate: (decision: LimitDecision) => void) => {
        late.current = onLate;
        if (limiterError) throw limiterError;
        return decision;
      },
      reclassify: async (_request: unknown, cls: string, _at: number, from = '2xx') => void reclassified.push(`${from}→${cls}`),
    },
    leases: { take: () => leased, reclassify: (_request: unknown, cls: string) => void leaseMoves.push(cls) },
    limitedRead: {
      run: async (_call: unknown, _read: FreshRead, onLate: (decision: LimitDecision) => void) => {
        late.current = onLate;
        if (limiterError) throw limiterError;
        if (!decision.allowed) return { kind: 'refused', decision };
        if (readError) return { kind: 'read-failed', decision, error: readError };
        return { kind: 'read', decision, fresh: { profile: null, pending: 0 } };
      },
      readAlone: async (alone: FreshRead) => {
        readsAlone.push(alone);
        return { profile: null, pending: 1 };
      },
    },
    logger: createLogger('silent', 'test'),
    metrics: {
      rateLimitRejected: (scope: string) => void rejected.push(scope),
      rateLimitAdmitted: (way: string) => void admittedWays.push(way),
    },
  } as unknown as AdmissionDeps;
  return {
    admission: new Admission({ deps, credential, endpoint: 'context', res: response }),
    res,
    reclassified,
    rejected,
    leaseMoves,
    readsAlone,
    admittedWays,
  };
}

it('sets the headers of an admitted call and moves its count when it ends with another status', async () => {
  const { admission, res, reclassified, admittedWays } = setup(admitted);
  expect(admission.pending).toBe(true);
  await expect(admission.withRead(read)).resolves.toEqual({ profile: null, pending: 0 });
  expect(admission.pending).toBe(false);
  expect(res.headers).toEqual({ 'X-RateLimit-Limit': '10', 'X-RateLimit-Remaining': '9', 'X-RateLimit-Reset': '1800000001' });
  res.statusCode = 500;
  res.emit('finish');
  await new Promise((resolve) => setImmediate(resolve));
  expect(reclassified).toEqual(['2xx→5xx']);
  expect(admittedWays).toEqual(['checked']);
});

it('throws the 429 of a refused call, with its headers', async () => {
  const { admission, res, rejected } = setup(refused);
  await expect(admission.withRead(read)).rejects.toMatchObject({
    code: 'RATE_LIMIT_EXCEEDED',
    details: { limit: 10, window: '1s', retryAfter: 1, scope: 'second' },
  });
  expect(res.headers['X-RateLimit-Remaining']).toBe('0');
  expect(rejected).toEqual(['second']);
});

it('meters an admitted call whose profile read failed, then throws the failure', async () => {
  const { admission, res, reclassified } = setup(admitted, new Error('WRONGTYPE'));
  await expect(admission.withRead(read)).rejects.toThrow('WRONGTYPE');
  expect(res.headers['X-RateLimit-Remaining']).toBe('9');
  res.statusCode = 500;
  res.emit('finish');
  await new Promise((resolve) => setImmediate(resolve));
  expect(reclassified).toEqual(['2xx→5xx']);
});

const leasedSlot: LeasedAdmission = { allowed: true, limit: 1000, remaining: 990, resetAt: 1_800_000_001, meteredAt: 1_800_000_000_000 };

it.each([
  ['held by this process', leasedSlot],
  ['on its way from Redis', Promise.resolve(leasedSlot)],
])('admits a call on a leased slot %s: its headers, the read alone, and a move of its count in the leases', async (_name, slot) => {
  const { admission, res, reclassified, leaseMoves, readsAlone, admittedWays } = setup(refused, undefined, slot);
  // The limiter would refuse: a leased slot never asks it.
  await expect(admission.withRead(read)).resolves.toEqual({ profile: null, pending: 1 });
  expect(readsAlone).toEqual([read]);
  expect(res.headers).toEqual({ 'X-RateLimit-Limit': '1000', 'X-RateLimit-Remaining': '990', 'X-RateLimit-Reset': '1800000001' });
  res.statusCode = 404;
  res.emit('finish');
  expect(leaseMoves).toEqual(['4xx']);
  expect(reclassified).toEqual([]);
  expect(admittedWays).toEqual(['leased']);
});

it('checks a call with the limiter when no lease is granted', async () => {
  const { admission, rejected, readsAlone } = setup(refused, undefined, Promise.resolve(undefined));
  await expect(admission.withRead(read)).rejects.toMatchObject({ code: 'RATE_LIMIT_EXCEEDED' });
  expect(rejected).toEqual(['second']);
  expect(readsAlone).toEqual([]);
});

it.each([
  ['was admitted there: its 2xx moves to 5xx', admitted, ['2xx→5xx']],
  ['was refused there: its 429 moves to 5xx', refused, ['429→5xx']],
])('meters a call answered 503 whose limiter script ran after the client gave up on it, and %s', async (_name, decision, moves) => {
  const { admission, reclassified, admittedWays } = setup(decision, undefined, undefined, new Error('Command timed out'));
  await expect(admission.withRead(read)).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  expect(reclassified).toEqual([]);
  // Redis answers again and runs the script.
  late.current!(decision);
  await new Promise((resolve) => setImmediate(resolve));
  expect(reclassified).toEqual(moves);
  expect(admittedWays).toEqual([]);
});

it('meters a checked call (not deferred to a read) the same way when its limiter script ran late', async () => {
  const { admission, reclassified } = setup(refused, undefined, undefined, new Error('Command timed out'));
  await expect(admission.alone()).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  late.current!(refused);
  await new Promise((resolve) => setImmediate(resolve));
  expect(reclassified).toEqual(['429→5xx']);
});

it('meters a refusal that came after the request was answered at its deadline as what it got, without headers', async () => {
  const { admission, res, reclassified, rejected } = setup(refused);
  // The deadline answered 503 while the limiter's reply was on its way.
  res.headersSent = true;
  res.statusCode = 503;
  await expect(admission.withRead(read)).rejects.toMatchObject({ code: 'RATE_LIMIT_EXCEEDED' });
  await new Promise((resolve) => setImmediate(resolve));
  expect(res.headers).toEqual({});
  expect(reclassified).toEqual(['429→5xx']);
  expect(rejected).toEqual(['second']);
});
