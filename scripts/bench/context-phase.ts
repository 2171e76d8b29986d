import { alternate, alternateAll, type AbResult } from './ab';
import { cannon, openLoop, postEach } from './load-client';
import type { LoadRig } from './load-rig';
import { failures, steadyP99LimitMs } from './load-stats';
import { rss, type Rss } from './memory';

/**
 * The context phases of bench:load, each alternated with the bare baseline: full load with the
 * test key and with the live key (autocannon, closed loop) in the same rounds, then a steady
 * rate (`--steady-rate`) sent open loop, its latency measured from each request's scheduled time.
 */

export interface SteadyLoad extends AbResult {
  /** Requests per second, sent open loop (`--steady-rate`). */
  rate: number;
  /** The p99 the context side must stay under: max(5 ms, 1.5 × the bare side's p99). */
  p99LimitMs: number;
  pass: boolean;
}

export interface ContextPhases {
  testKey: AbResult;
  liveKey: AbResult;
  steadyLoad: SteadyLoad;
  rssAfter: { api: Rss; workers: Rss };
}

export async function contextPhases(rig: LoadRig): Promise<ContextPhases> {
  const { connections, duration } = rig.opts;
  const full = (port: number, request: ReturnType<typeof postEach>) => () => cannon(port, request, { connections, duration });
  const bare = full(rig.bare.port, postEach('/bare', rig.headers, rig.contextBody));
  // Decisions of the round before are applied first, so that no round pays for another's.
  const beforeEach = () => rig.drained('earlier decisions to be applied');

  // Both keys in the same rounds: the live key measured after the test key's rounds would meet
  // a Redis holding their idempotency records and a longer append-only file.
  const { testKey, liveKey } = await alternateAll(rig, {
    bare,
    subjects: {
      testKey: { what: 'context (test key)', run: full(rig.api.port, rig.contextRequest(rig.headers)) },
      liveKey: { what: 'context (live key)', run: full(rig.api.port, rig.contextRequest(rig.liveHeaders)) },
    },
    beforeEach,
  });
  const rssAfter = { api: rss(rig.roles.api ?? []), workers: rss(rig.roles.worker ?? []) };

  const rate = rig.opts.steadyRate;
  const paced = (port: number, path: string) => () =>
    openLoop({ port, path, headers: rig.headers, body: rig.contextBody, rate, seconds: duration });
  const steady = await alternate(rig, {
    what: `context at ${rate} req/s open loop`,
    bare: paced(rig.bare.port, '/bare'),
    subject: paced(rig.api.port, '/v1/context'),
    beforeEach,
  });
  const p99LimitMs = steadyP99LimitMs(steady.bare.all.p99);
  const pass = steady.subject.all.p99 <= p99LimitMs && failures(steady.subject.all) === 0;
  return { testKey, liveKey, steadyLoad: { ...steady, rate, p99LimitMs, pass }, rssAfter };
}
