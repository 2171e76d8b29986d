import { KeyService } from '../../shared/credentials/key.service';
import { sampleValue } from '../support/prometheus';
import { spawnApi, stop, type Spawned } from '../support/processes';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';

/**
 * The per-second limit is exact across API processes sharing Redis: two processes, bursts on
 * either side of a Redis second boundary, then both hammering one key. Redis runs on this
 * machine, so its TIME and Date.now read the same clock: a request was admitted between the
 * moment it was sent and the moment its answer arrived (Date.now truncates to the ms, hence +1).
 */
let env: TestEnv;
let apis: Array<Spawned & { url: string }>;

beforeAll(async () => {
  env = await createTestEnv();
  apis = [await spawnApi(env.processEnv()), await spawnApi(env.processEnv())];
});
afterAll(async () => {
  await Promise.all(apis.map((api) => stop(api, 'SIGKILL')));
  await env.close();
});

const LIMIT = 25;

interface Sample {
  phase: 'before' | 'after' | 'hammer';
  sent: number;
  received: number;
  status: number;
  retryAfter: string | null;
}

/** Admitted requests that were certainly admitted within one second of each other. */
function largestCertainSpan(admitted: Sample[]): number {
  let largest = 0;
  for (const first of admitted) {
    const within = admitted.filter((s) => s.sent >= first.sent && s.received + 1 <= first.sent + 1000);
    largest = Math.max(largest, within.length);
  }
  return largest;
}

async function redisMillis(): Promise<number> {
  const [seconds, micros] = await env.redis.time();
  return Number(seconds) * 1000 + Number(micros) / 1000;
}

/**
 * Sends one GET of a missing profile with `key` and records it in `samples`. A connection refused
 * or reset while connecting never reached the API (nothing was counted), so it is retried: on a
 * loaded machine the listen queue can overflow under this hammering. Any other failure fails
 * the test, saying whether an API process died and what it printed.
 */
function sender(key: string, samples: Sample[]) {
  return async (url: string, phase: Sample['phase']): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      const sent = Date.now();
      try {
        const res = await fetch(`${url}/v1/profile/nobody`, { headers: { Authorization: `Bearer ${key}` } });
        await res.arrayBuffer();
        samples.push({ phase, sent, received: Date.now(), status: res.status, retryAfter: res.headers.get('retry-after') });
        return;
      } catch (error) {
        const cause = (error as { cause?: { syscall?: string } }).cause;
        if (cause?.syscall === 'connect' && attempt < 5) continue;
        const state = apis.map(
          (api) => `exit=${api.child.exitCode ?? api.child.signalCode ?? 'running'} output=${api.output().slice(-2000)}`,
        );
        throw new Error(`request to ${url} failed: ${String(cause ?? error)}; ${state.join(' | ')}`);
      }
    }
  };
}

it('never admits more than the limit in any one-second span with two API processes on one key', async () => {
  const { key } = await new KeyService(env.db, TEST_SECRET).create({ account: 'two-apis', environment: 'live', rateLimitRps: LIMIT });
  const samples: Sample[] = [];
  const send = sender(key, samples);
  const burst = (phase: Sample['phase']) =>
    Promise.all(apis.flatMap((api) => Array.from({ length: 2 * LIMIT }, () => send(api.url, phase))));

  // Place the first burst shortly before a Redis second boundary (fixed windows would admit the
  // limit there and again right after it), and the second one as soon as the boundary passed.
  const boundary = Math.ceil((await redisMillis()) / 1000) * 1000 + 1000;
  const untilBurst = boundary - 150 - (await redisMillis());
  await new Promise((r) => setTimeout(r, Math.max(0, untilBurst)));
  await burst('before');
  while ((await redisMillis()) < boundary) await new Promise((r) => setImmediate(r));
  await burst('after');
  const deadline = Date.now() + 1500;
  const hammer = async (url: string) => {
    while (Date.now() < deadline) await send(url, 'hammer');
  };
  await Promise.all(apis.flatMap((api) => Array.from({ length: 8 }, () => hammer(api.url))));

  expect(new Set(samples.map((s) => s.status))).toEqual(new Set([404, 429]));
  const admitted = samples.filter((s) => s.status === 404);
  expect(samples.filter((s) => s.status === 429).every((s) => s.retryAfter === '1')).toBe(true);
  // 100 requests at once: the limit is used up (were any refused, the last second held 25).
  expect(admitted.filter((s) => s.phase === 'before').length).toBeGreaterThanOrEqual(LIMIT);
  // Enough was counted for the check below to mean something: both bursts whole (8 × LIMIT
  // requests), more admissions while hammering once the first second passed, and a span that
  // certainly held a full limit's worth (a span of fewer would pass any limiter).
  expect(samples.length).toBeGreaterThanOrEqual(8 * LIMIT);
  expect(admitted.filter((s) => s.phase === 'hammer').length).toBeGreaterThanOrEqual(LIMIT);
  expect(largestCertainSpan(admitted)).toBe(LIMIT);
}, 30_000);

it('stays exact when both processes admit a busy key on leased slots, and meters every request', async () => {
  // The smallest limit that leases: a process leases once it sees 16 requests per 100 ms, a rate
  // above the limit, so a loaded machine that can lease can also reach the limit.
  const limit = 128;
  const issued = await new KeyService(env.db, TEST_SECRET).create({ account: 'two-apis-leased', environment: 'live', rateLimitRps: limit });
  const samples: Sample[] = [];
  const send = sender(issued.key, samples);
  let leasedSeen = false;
  // Hammer for at least 2.5 s, and on a slow machine until leases and refusals were both seen.
  const started = Date.now();
  const enough = () =>
    Date.now() - started >= 12_000 || (Date.now() - started >= 2500 && leasedSeen && samples.some((s) => s.status === 429));
  const hammer = async (url: string) => {
    while (!enough()) await send(url, 'hammer');
  };
  // Each process counts the requests it let through on a leased slot; only this key can lease.
  const leasedAdmissions = async () => {
    const scrapes = await Promise.all(apis.map(async (api) => (await fetch(`${api.url}/metrics`)).text()));
    return scrapes.reduce((sum, text) => sum + (sampleValue(text, 'cos_rate_limit_admissions_total', { way: 'leased' }) ?? 0), 0);
  };
  const watch = async () => {
    while (!enough() && !leasedSeen) {
      leasedSeen = (await leasedAdmissions()) > 0;
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  await Promise.all([watch(), ...apis.flatMap((api) => Array.from({ length: 20 }, () => hammer(api.url)))]);

  const admitted = samples.filter((s) => s.status === 404);
  const refused = samples.filter((s) => s.status === 429);
  expect(admitted.length + refused.length).toBe(samples.length);
  expect(leasedSeen).toBe(true);
  expect(largestCertainSpan(admitted)).toBeLessThanOrEqual(limit);
  // The limit was reached: more than a second's worth admitted, and some requests refused.
  expect(admitted.length).toBeGreaterThan(limit);
  expect(refused.length).toBeGreaterThan(0);
  // Each process sends its counts every 100 ms: every admitted request ended 404, so 4xx.
  await new Promise((r) => setTimeout(r, 500));
  const day = new Date().toISOString().slice(0, 10);
  const usage = await env.usage(day, issued.id);
  expect(Number(usage[`${issued.id}|profile.get|4xx`])).toBe(admitted.length);
  expect(Number(usage[`${issued.id}|profile.get|429`])).toBe(refused.length);
  expect(Number(usage[`${issued.id}|profile.get|2xx`] ?? 0)).toBe(0);
}, 30_000);
