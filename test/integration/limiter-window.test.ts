import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { Limiter, type LimitDecision } from '../../shared/limits/limiter';
import { WINDOW_MICROS } from '../../shared/limits/sliding-window';
import { startOfNextMonth, utcMonth } from '../../shared/util/calendar';
import { createTestEnv, type TestEnv } from '../support/test-env';

/**
 * The per-second limit's script in real Redis, with the clock injected (epoch ms, µs precision):
 * at most N requests in any one-second span, and no refusal while fewer than N were admitted
 * in the last second.
 */
let env: TestEnv;
let nowMicros = 0;
let limiter: Limiter;
beforeAll(async () => {
  env = await createTestEnv();
  limiter = new Limiter(env.redis, env.keys, () => nowMicros / 1000);
});
afterAll(() => env.close());

const ACCOUNT = 'acct_window';
const SECOND = 1_780_000_000 * WINDOW_MICROS; // a whole epoch second, in µs

async function checkAt(keyId: string, micros: number, perSecond: number): Promise<LimitDecision> {
  nowMicros = micros;
  return limiter.check({ accountId: ACCOUNT, keyId, endpoint: 'context', perSecond, perMonth: null });
}

const admittedCount = (decisions: LimitDecision[]) => decisions.filter((d) => d.allowed).length;

describe('per-second sliding window', () => {
  it.each([10, 50])('admits exactly %i requests at one instant and refuses the next', async (limit) => {
    const keyId = randomUUID();
    const burst = [];
    for (let i = 0; i < limit + 1; i++) burst.push(await checkAt(keyId, SECOND + 400_000, limit));
    expect(burst.slice(0, limit).map((d) => d.allowed && d.remaining)).toEqual(Array.from({ length: limit }, (_, i) => limit - 1 - i));
    expect(burst[limit]).toEqual({ allowed: false, scope: 'second', limit, resetAt: SECOND / WINDOW_MICROS + 2, retryAfter: 1 });
    expect(await env.redis.llen(env.keys.rateLog({ accountId: ACCOUNT, keyId }))).toBe(limit);
  });

  it('refuses a burst just after a second boundary when one just before it used the limit', async () => {
    const keyId = randomUUID();
    const before = [];
    for (let i = 0; i < 10; i++) before.push(await checkAt(keyId, SECOND + 950_000 + i, 10));
    expect(admittedCount(before)).toBe(10);
    // Fixed windows would admit 10 more here: 20 within 0.1 s.
    const after = [];
    for (let i = 0; i < 10; i++) after.push(await checkAt(keyId, SECOND + 1_050_000 + i * 10_000, 10));
    expect(admittedCount(after)).toBe(0);
    expect(after[0]).toMatchObject({ scope: 'second', retryAfter: 1, resetAt: SECOND / WINDOW_MICROS + 2 });
    // Each slot frees exactly one second after its request.
    expect((await checkAt(keyId, SECOND + 1_949_999, 10)).allowed).toBe(false);
    expect(await checkAt(keyId, SECOND + 1_950_000, 10)).toMatchObject({ allowed: true, remaining: 0 });
    expect((await checkAt(keyId, SECOND + 1_950_000, 10)).allowed).toBe(false);
    expect(await checkAt(keyId, SECOND + 1_950_001, 10)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('never admits more than N in any one-second span, and refuses only when N were admitted in the last second', async () => {
    // Arrivals as gaps from a start anywhere in a second: bursts (gap 0), close requests, pauses.
    const gap = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 2_000 }), fc.integer({ min: 2_000, max: 700_000 }));
    const scenario = fc.record({
      limit: fc.integer({ min: 1, max: 8 }),
      start: fc.integer({ min: 0, max: WINDOW_MICROS - 1 }),
      gaps: fc.array(gap, { minLength: 1, maxLength: 60 }),
    });
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async ({ limit, start, gaps }) => {
        runs++;
        const keyId = randomUUID();
        const times: number[] = [];
        let t = SECOND + start;
        for (const g of gaps) times.push((t += g));
        const admitted: number[] = [];
        for (const time of times) {
          const decision = await checkAt(keyId, time, limit);
          const lastSecond = admitted.filter((a) => a > time - WINDOW_MICROS);
          if (decision.allowed) {
            expect(lastSecond.length).toBeLessThan(limit);
            admitted.push(time);
            expect(decision.remaining).toBe(limit - lastSecond.length - 1);
          } else {
            expect(lastSecond.length).toBe(limit);
            const freesAt = lastSecond[0]! + WINDOW_MICROS;
            expect(decision).toEqual({
              allowed: false,
              scope: 'second',
              limit,
              resetAt: Math.ceil(freesAt / WINDOW_MICROS),
              retryAfter: Math.ceil((freesAt - time) / WINDOW_MICROS),
            });
          }
        }
        // Every span [a, a + 1 s): its most crowded position starts at an admitted request.
        for (const a of admitted) expect(admitted.filter((b) => b >= a && b < a + WINDOW_MICROS).length).toBeLessThanOrEqual(limit);
        expect(await env.redis.llen(env.keys.rateLog({ accountId: ACCOUNT, keyId }))).toBeLessThanOrEqual(limit);
      }),
      { numRuns: 80 },
    );
    expect(runs).toBe(80);
  });
});

describe('the monthly count', () => {
  it("lives until 40 days after its month, set by the month's first admitted request", async () => {
    const accountId = `acct_${randomUUID()}`;
    nowMicros = SECOND + 400_000;
    const now = nowMicros / 1000;
    const check = () => limiter.check({ accountId, keyId: randomUUID(), endpoint: 'context', perSecond: 10, perMonth: null });
    const count = env.keys.monthlyCount({ accountId, month: utcMonth(now) });
    const lifetime = Math.ceil((startOfNextMonth(now) - now) / 1000) + 40 * 86_400;
    expect((await check()).allowed).toBe(true);
    const first = await env.redis.ttl(count);
    expect(first).toBeGreaterThan(lifetime - 5);
    expect(first).toBeLessThanOrEqual(lifetime);
    expect((await check()).allowed).toBe(true);
    expect(await env.redis.get(count)).toBe('2');
    expect(await env.redis.ttl(count)).toBeLessThanOrEqual(first);
  });
});
