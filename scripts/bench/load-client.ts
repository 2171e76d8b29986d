import type { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { LoadRun } from './load-stats';
import { OpenLoopSchedule } from './open-loop';
import { HOST } from './processes';

/**
 * bench:load's two load generators, both in the bench process: autocannon, closed loop (each
 * connection sends its next request when the last one is answered) for throughput; and an
 * open-loop client that sends on a fixed schedule for latency at a given rate. `stopLoad`
 * ends whatever is running (on Ctrl-C or error).
 */

// autocannon ships no types (and @types/autocannon is not a dependency): the part we use.
export interface AcRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (req: AcRequest, context: Record<string, unknown>) => AcRequest;
  onResponse?: (status: number, body: string) => void;
}
interface AcOptions {
  url: string;
  connections: number;
  pipelining: number;
  duration?: number;
  amount?: number;
  maxOverallRequests?: number;
  timeout?: number;
  requests: AcRequest[];
}
interface AcResult {
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats: Record<string, { count: number }>;
}
type AcInstance = EventEmitter & { stop(): void };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (opts: AcOptions, cb: (err: Error | null, result: AcResult) => void) => AcInstance;

const running = new Set<() => void>();

/** Stops every load run in progress; each resolves with what it measured so far. */
export function stopLoad(): void {
  for (const stop of running) stop();
}

/**
 * Whether every POST carries an Idempotency-Key of its own, as the SDKs send them (the bare
 * server receives the same header and ignores it); off, the load is what a client without keys
 * sends. One setting for the whole run (bench:load's `--without-idempotency-keys`).
 */
let keyedPosts = true;
export function sendIdempotencyKeys(on: boolean): void {
  keyedPosts = on;
}
const keyed = (headers: Record<string, string>): Record<string, string> =>
  keyedPosts ? { ...headers, 'Idempotency-Key': randomUUID() } : headers;

/** A JSON POST to `path` whose body `body()` makes anew for every request (keyed, see sendIdempotencyKeys). */
export function postEach(path: string, headers: Record<string, string>, body: () => string): AcRequest {
  return {
    method: 'POST',
    path,
    headers,
    setupRequest: (req) => ({ ...req, headers: keyed(headers), body: body() }),
  };
}

export interface CannonOptions {
  connections: number;
  /** Seconds to run (or the bound of an `amount` run). */
  duration?: number;
  /** Requests in all, then stop. */
  amount?: number;
  maxOverallRequests?: number;
}

/**
 * One autocannon run, pipelining 1. Latency percentiles come from every 2xx response's exact
 * time (ms, from its send), the rate from the 2xx answers over the time from the first request
 * to the last answer.
 */
export function cannon(port: number, request: AcRequest, options: CannonOptions): Promise<LoadRun> {
  return new Promise((resolve, reject) => {
    const latenciesMs: number[] = [];
    let ok = 0;
    let first = 0;
    let last = 0;
    const instance = autocannon(
      { url: `http://${HOST}:${port}`, pipelining: 1, timeout: 10, requests: [request], ...options },
      (error, result) => {
        clearTimeout(guard);
        running.delete(stop);
        if (error) return reject(error);
        resolve({
          ok,
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          seconds: Math.max(0.001, (last - first) / 1000),
          latenciesMs,
          statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count])),
        });
      },
    );
    const stop = () => instance.stop();
    running.add(stop);
    instance.once('start', () => (first = performance.now()));
    instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      last = performance.now();
      if (status >= 200 && status < 300) {
        ok++;
        latenciesMs.push(ms);
      }
    });
    // A hard bound in case the target stops answering.
    const guard = setTimeout(stop, ((options.duration ?? 600) + 60) * 1000);
  });
}

export interface OpenLoopOptions {
  port: number;
  path: string;
  headers: Record<string, string>;
  body: () => string;
  /** Requests per second. */
  rate: number;
  seconds: number;
  /** Keep-alive sockets the client may open; more requests in flight wait for one (and that wait counts). */
  sockets?: number;
  /** How long to wait for the last answers after the last request was due; later ones count as timeouts. */
  drainMs?: number;
}

/**
 * Open-loop load: request i leaves at start + i / rate whether or not earlier ones were
 * answered, and its latency is measured from that scheduled time (see OpenLoopSchedule). A
 * timer checks every millisecond and sends every request that is due.
 */
export async function openLoop(o: OpenLoopOptions): Promise<LoadRun> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: o.sockets ?? 1024 });
  const schedule = new OpenLoopSchedule(performance.now(), o.rate, Math.max(1, Math.round(o.rate * o.seconds)));
  const inFlight = new Map<number, http.ClientRequest>();
  const latenciesMs: number[] = [];
  const statusCodes: Record<string, number> = {};
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  let sent = 0;
  let lastAnswer = schedule.startMs;
  let maxSendLagMs = 0;
  let allAnswered = () => {};
  const settled = (i: number): boolean => {
    if (!inFlight.delete(i)) return false;
    lastAnswer = performance.now();
    if (sent === schedule.total && inFlight.size === 0) allAnswered();
    return true;
  };
  const send = (i: number) => {
    const payload = o.body();
    maxSendLagMs = Math.max(maxSendLagMs, performance.now() - schedule.dueAt(i));
    const headers = { ...keyed(o.headers), 'Content-Length': String(Buffer.byteLength(payload)) };
    const req = http.request({ host: HOST, port: o.port, method: 'POST', path: o.path, agent, headers }, (res) => {
      res.resume();
      res.on('end', () => {
        if (!settled(i)) return;
        const status = res.statusCode ?? 0;
        statusCodes[status] = (statusCodes[status] ?? 0) + 1;
        if (status >= 200 && status < 300) {
          ok++;
          latenciesMs.push(schedule.latency(i, lastAnswer));
        } else non2xx++;
      });
    });
    req.on('error', () => {
      if (settled(i)) errors++;
    });
    inFlight.set(i, req);
    req.end(payload);
  };

  let stopped = false;
  const stop = () => (stopped = true);
  running.add(stop);
  await new Promise<void>((resolve) => {
    const tick = () => {
      const due = stopped ? sent : schedule.dueBy(performance.now());
      while (sent < due) send(sent++);
      if (sent < schedule.total && !stopped) return;
      clearInterval(timer);
      resolve();
    };
    const timer = setInterval(tick, 1);
    tick();
  });
  running.delete(stop);
  if (!stopped) {
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(deadline);
        running.delete(done);
        resolve();
      };
      const deadline = setTimeout(done, o.drainMs ?? 10_000);
      allAnswered = done;
      running.add(done);
      if (inFlight.size === 0) done();
    });
  }
  // Unanswered requests count as timeouts, with the wait so far as their (lower-bound) latency.
  const now = performance.now();
  const timeouts = inFlight.size;
  for (const [i, req] of inFlight) {
    latenciesMs.push(schedule.latency(i, now));
    req.destroy();
  }
  inFlight.clear();
  agent.destroy();
  return {
    ok,
    non2xx,
    errors,
    timeouts,
    seconds: Math.max(0.001, (lastAnswer - schedule.startMs) / 1000),
    latenciesMs,
    statusCodes,
    maxSendLagMs,
  };
}
