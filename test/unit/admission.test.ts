import { EventEmitter } from 'node:events';
import type { Response } from 'express';
import { Admission, type AdmissionDeps } from '../../api/middleware/rate-limit.middleware';
import type { KeyCredential } from '../../shared/credentials/key.repository';
import type { LimitDecision } from '../../shared/limits/limiter';
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

function setup(decision: LimitDecision, readError?: Error) {
  const reclassified: string[] = [];
  const rejected: string[] = [];
  const res = Object.assign(new EventEmitter(), { headers: {} as Record<string, string>, headersSent: false, statusCode: 200 });
  const response = Object.assign(res, {
    set: (headers: Record<string, string>) => Object.assign(res.headers, headers),
  }) as unknown as Response;
  const deps = {
    limiter: { reclassify: async (_request: unknown, cls: string) => void reclassified.push(cls) },
    limitedRead: {
      run: async () => {
        if (!decision.allowed) return { kind: 'refused', decision };
        if (readError) return { kind: 'read-failed', decision, error: readError };
        return { kind: 'read', decision, fresh: { profile: null, pending: 0 } };
      },
    },
    logger: createLogger('silent', 'test'),
    metrics: { rateLimitRejected: (scope: string) => void rejected.push(scope) },
  } as unknown as AdmissionDeps;
  return { admission: new Admission({ deps, credential, endpoint: 'context', res: response }), res, reclassified, rejected };
}

it('sets the headers of an admitted call and moves its count when it ends with another status', async () => {
  const { admission, res, reclassified } = setup(admitted);
  expect(admission.pending).toBe(true);
  await expect(admission.withRead(read)).resolves.toEqual({ profile: null, pending: 0 });
  expect(admission.pending).toBe(false);
  expect(res.headers).toEqual({ 'X-RateLimit-Limit': '10', 'X-RateLimit-Remaining': '9', 'X-RateLimit-Reset': '1800000001' });
  res.statusCode = 500;
  res.emit('finish');
  await new Promise((resolve) => setImmediate(resolve));
  expect(reclassified).toEqual(['5xx']);
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
  expect(reclassified).toEqual(['5xx']);
});
