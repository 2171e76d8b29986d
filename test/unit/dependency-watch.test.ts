import { ServerResponse, IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { DependencyWatch, outageAwareLogger } from '../../shared/health/dependency-watch';
import type { DependencyStatus } from '../../shared/health/readiness';
import { RequestDeadlines } from '../../shared/http/request-deadlines';
import { createLogger } from '../../shared/logger/logger';
import { capture } from '../support/cli';
import { eventually } from '../support/harness';

/** Probes whose answers the test sets, counting how often each was asked. */
function probes(initial: Record<'redis' | 'postgres', DependencyStatus>) {
  const state = { ...initial };
  const asked = { redis: 0, postgres: 0 };
  return {
    state,
    asked,
    probes: {
      redis: async () => (asked.redis++, state.redis),
      postgres: async () => (asked.postgres++, state.postgres),
    },
  };
}

const lines = (out: ReturnType<typeof capture>) =>
  out
    .text()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { msg: string; dependency?: string; downMs?: number; failures?: number });

const unreachable = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

describe('DependencyWatch', () => {
  it('logs an outage once when a probe confirms it and once when it ends, counting the failures between', async () => {
    const out = capture();
    const p = probes({ redis: 'ok', postgres: 'unavailable' });
    const watch = new DependencyWatch({ probes: p.probes, logger: createLogger('info', 'test', out.stream), intervalMs: 20 });
    const changes: string[] = [];
    watch.onChange((change) => changes.push(`${change.dependency}:${change.status}`));
    await watch.failed(unreachable());
    expect(watch.status('postgres')).toBe('unavailable');
    expect(watch.status('redis')).toBe('ok');
    for (let i = 0; i < 100; i++) await watch.failed(unreachable());
    const waiting = watch.whenAllUp();
    p.state.postgres = 'ok';
    await waiting;
    expect(watch.anyDown).toBe(false);
    const logged = lines(out);
    expect(logged.map((line) => line.msg)).toEqual(['postgres unavailable; probing it every 20 ms', 'postgres available again']);
    expect(logged[1]).toMatchObject({ dependency: 'postgres', failures: 101 });
    expect(logged[1]!.downMs).toBeGreaterThanOrEqual(0);
    expect(changes).toEqual(['postgres:unavailable', 'postgres:ok']);
    expect(watch.outageCounts).toEqual({ redis: 0, postgres: 1 });
    expect(watch.failures).toBe(101);
    watch.close();
  });

  it('takes a failure whose probes all answer for a passing fault: nothing down, nothing logged, probes at most once per interval', async () => {
    const out = capture();
    const p = probes({ redis: 'ok', postgres: 'ok' });
    const watch = new DependencyWatch({ probes: p.probes, logger: createLogger('info', 'test', out.stream), intervalMs: 60_000 });
    await Promise.all(Array.from({ length: 20 }, () => watch.failed(unreachable())));
    await watch.failed(unreachable());
    expect(watch.anyDown).toBe(false);
    expect(p.asked).toEqual({ redis: 1, postgres: 1 });
    expect(out.text()).toBe('');
    watch.close();
  });

  it('names a Postgres that refuses writes, and lets waiters go when closed', async () => {
    const out = capture();
    const p = probes({ redis: 'ok', postgres: 'read-only' });
    const watch = new DependencyWatch({ probes: p.probes, logger: createLogger('info', 'test', out.stream), intervalMs: 60_000 });
    await watch.failed(unreachable());
    expect(watch.status('postgres')).toBe('read-only');
    expect(lines(out)[0]!.msg).toBe('postgres refuses writes; probing it every 60000 ms');
    const waiting = watch.whenAllUp();
    watch.close();
    await waiting;
    expect(watch.closed).toBe(true);
  });
});

describe('outageAwareLogger', () => {
  it('tells the watch of a warning about an unreachable dependency instead of logging it, and logs everything else', async () => {
    const out = capture();
    const told: unknown[] = [];
    const quiet = outageAwareLogger(createLogger('info', 'test', out.stream), { failed: async (error) => void told.push(error) });
    const error = unreachable();
    quiet.warn({ err: error }, 'rate limiter unavailable');
    quiet.warn({ err: new Error('a bug') }, 'usage reclassification failed');
    quiet.info({ n: 1 }, 'an info line');
    expect(told).toEqual([error]);
    expect(lines(out).map((line) => line.msg)).toEqual(['usage reclassification failed', 'an info line']);
  });
});

describe('RequestDeadlines', () => {
  const response = () => new ServerResponse(new IncomingMessage(new Socket()));

  it('hands a request not answered within the deadline to expire, once, and leaves answered ones alone', async () => {
    const expired: ServerResponse[] = [];
    const deadlines = new RequestDeadlines(50, (res) => expired.push(res));
    const slow = response();
    const answered = response();
    deadlines.start(slow, performance.now());
    deadlines.start(answered, performance.now());
    deadlines.end(answered);
    await eventually(async () => expired.length === 1, 2000, 10);
    expect(expired).toEqual([slow]);
    expect(deadlines.size).toBe(0);
    deadlines.close();
  });
});
