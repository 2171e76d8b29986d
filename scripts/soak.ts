import path from 'node:path';
import { Redis } from 'ioredis';
import { KeyService } from '../shared/credentials/key.service';
import { BENCH_SECRET, log, sleep, startBenchBackend, startProc, startServer, waitUntil, withCleanup, type Proc } from './bench/processes';
import { busyPercent, systemTicks } from './bench/cpu';
import { EventQueues, keysOf } from './bench/event-queues';
import { machineDescription, runSource } from './bench/provenance';
import { outcomeLedger } from './soak/ledger';
import { rssMb, treePssMb } from './soak/memory';
import { minuteRow, otherServerErrors, printReport, type MinuteRow, type SoakResult } from './soak/report';
import { SoakTraffic } from './soak/traffic';
import { nodeArgs } from '../shared/process/node-flags';
import { printOutageReport, runDependencyFault, type Fault } from './soak/dependency-fault';

/**
 * `npm run soak`: the built api and two workers on a throwaway Postgres and Redis (appendonly,
 * everysec) under mixed context, outcome and profile traffic of a live and a test key, while a
 * worker is SIGKILLed (and started again) every minute, Redis is stopped cleanly and started
 * again once, and Postgres is restarted once. Reports per minute the traffic, p99 and each
 * process's memory; at the end, whether every acknowledged outcome was applied exactly once.
 * `--redis-kill` SIGKILLs Redis instead of stopping it, and reports how many acknowledged
 * outcomes `appendfsync everysec` lost. Options: --minutes 10, --clients 12, --think-ms 50,
 * --users 300, --redis-down 10 (s), --postgres-down 15 (s), --json.
 * `--scenario postgres-outage` runs one long Postgres outage instead, `postgres-freeze` and
 * `redis-freeze` one freeze (soak/dependency-fault.ts): --down 600 (s; 60 for a freeze),
 * --rate 30 (pairs/s), --users 200, --warm 30 (s).
 */
function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const value = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} needs a positive number`);
  return value;
}
const opts = {
  minutes: flag('minutes', 10),
  clients: flag('clients', 12),
  thinkMs: flag('think-ms', 50),
  users: flag('users', 300),
  redisDownS: flag('redis-down', 10),
  postgresDownS: flag('postgres-down', 15),
  redisKill: process.argv.includes('--redis-kill'),
  json: process.argv.includes('--json'),
};
const scenario = process.argv.includes('--scenario') ? process.argv[process.argv.indexOf('--scenario') + 1] : 'mixed';
const FAULTS: readonly string[] = ['postgres-outage', 'postgres-freeze', 'redis-freeze'] satisfies Fault[];
if (scenario !== 'mixed' && !FAULTS.includes(scenario!)) throw new Error(`--scenario is mixed or one of ${FAULTS.join(', ')}`);
const PREFIX = 'soak';
const MINUTE = 60_000;

let traffic: SoakTraffic | undefined;

async function run(dir: string, onCleanup: (step: () => Promise<void>) => void): Promise<SoakResult> {
  const {
    services,
    db,
    key: testKey,
    env,
  } = await startBenchBackend(dir, onCleanup, {
    account: 'soak',
    keyName: 'soak test key',
    prefix: PREFIX,
    dbPoolSize: 4,
  });
  const liveKey = (await new KeyService(db, BENCH_SECRET).create({ account: 'soak', environment: 'live', rateLimitRps: 100_000 })).key;
  await db.updateTable('accounts').set({ plan: 'enterprise' }).where('name', '=', 'soak').execute();
  const redis = new Redis(services.redisUrl, { maxRetriesPerRequest: null });
  redis.on('error', () => undefined);
  onCleanup(async () => redis.disconnect());
  const queues = new EventQueues(redis, keysOf(env));
  onCleanup(() => queues.close());

  const api = await startServer('api', nodeArgs('api', path.join(__dirname, '../api/main.js')), env, '/healthz');
  const startWorker = (slot: number) => startProc(`worker-${slot + 1}`, nodeArgs('worker', path.join(__dirname, '../worker/main.js')), env);
  const workers: Proc[] = [startWorker(0), startWorker(1)];

  const durationMs = opts.minutes * MINUTE;
  const events: SoakResult['events'] = [];
  const started = Date.now();
  const note = (what: string) => {
    events.push({ atS: Math.round((Date.now() - started) / 100) / 10, what });
    log(what);
  };
  const outage = async (name: string, service: typeof services.redis, how: 'clean' | 'kill', downMs: number) => {
    await service!.stop(how);
    note(`${name} ${how === 'kill' ? 'SIGKILLed' : 'stopped cleanly'}`);
    await sleep(downMs);
    await service!.start();
    note(`${name} started again`);
  };
  const schedule: Array<{ at: number; run: () => Promise<void> }> = [
    { at: 0.3 * durationMs, run: () => outage('Redis', services.redis, opts.redisKill ? 'kill' : 'clean', opts.redisDownS * 1000) },
    { at: 0.6 * durationMs, run: () => outage('Postgres', services.postgres, 'clean', opts.postgresDownS * 1000) },
  ];
  for (let m = 0; (m + 0.5) * MINUTE < durationMs; m++) {
    schedule.push({
      at: (m + 0.5) * MINUTE,
      run: async () => {
        const slot = m % 2;
        workers[slot]!.child.kill('SIGKILL');
        await workers[slot]!.exited;
        workers[slot] = startWorker(slot);
        note(`worker-${slot + 1} SIGKILLed and started again`);
      },
    });
  }
  const timers: NodeJS.Timeout[] = [];
  const running: Array<Promise<void>> = [];
  for (const event of schedule) timers.push(setTimeout(() => running.push(event.run()), event.at));
  onCleanup(async () => timers.forEach(clearTimeout));

  // Memory and machine load at the end of every minute.
  const memory: Array<{ busy: number | null; mb: Record<string, number | null> }> = [];
  let ticks = systemTicks();
  let sampledAt = Date.now();
  const sample = () => {
    const now = systemTicks();
    memory.push({
      // Too short a span (the tail after the traffic stopped) says nothing about the load.
      busy: Date.now() - sampledAt >= 10_000 ? busyPercent(ticks, now, Date.now() - sampledAt) : null,
      mb: {
        api: rssMb(api.proc.child.pid),
        'worker-1': rssMb(workers[0]!.child.pid),
        'worker-2': rssMb(workers[1]!.child.pid),
        postgres: treePssMb(services.postgres!.child.pid),
        redis: rssMb(services.redis!.child.pid),
        'soak client': Math.round(process.memoryUsage().rss / 104_857.6) / 10,
      },
    });
    ticks = now;
    sampledAt = Date.now();
  };
  const sampler = setInterval(sample, MINUTE);
  onCleanup(async () => clearInterval(sampler));

  traffic = new SoakTraffic({
    port: api.port,
    keys: [
      { environment: 'live', key: liveKey },
      { environment: 'test', key: testKey },
    ],
    clients: opts.clients,
    thinkMs: opts.thinkMs,
    users: opts.users,
    retryGraceMs: 120_000,
  });
  note(`traffic started: ${opts.clients} clients`);
  const trafficDone = traffic.run();
  await sleep(durationMs);
  traffic.stop();
  note('traffic stopped; unacknowledged outcomes are retried until acknowledged');
  await Promise.all(running);
  await trafficDone;
  clearInterval(sampler);
  if (memory.length < traffic.minutes.length) sample();

  const idle = async () => {
    const counts = await queues.counts();
    return counts.pending + counts.delayed === 0 ? true : undefined;
  };
  const queueDrained = await waitUntil('the queue to drain', 5 * MINUTE, 1000, idle).then(
    () => true,
    () => false,
  );
  note(queueDrained ? 'queue drained' : 'queue not drained after 5 minutes');

  const ledger = await outcomeLedger(db, traffic.accepted);
  const failed = (await Promise.all(queues.queues.map((queue) => queue.getFailed(0, -1)))).flat();
  const parked = new Set(failed.map((job) => job.data?.requestId as string | undefined));
  const minutes: MinuteRow[] = traffic.minutes.map((stats, i) => minuteRow(i, stats, memory[i]?.busy ?? null, memory[i]?.mb ?? {}));
  const fiveHundreds = otherServerErrors(minutes);
  const outcomes = {
    ...ledger,
    lost: ledger.lost.length,
    lostParked: ledger.lost.filter((id) => parked.has(id)).length,
    refused: Object.fromEntries(traffic.refusedOutcomes),
  };
  const clean = outcomes.lost === 0 && failed.length === 0;
  return {
    command: `npm run soak -- ${process.argv.slice(2).join(' ')}`.trim(),
    date: new Date().toISOString(),
    source: runSource(),
    machine: machineDescription(),
    settings: { ...opts, workers: 2 },
    events,
    minutes,
    outcomes,
    failedJobs: { count: failed.length, reasons: [...new Set(failed.map((job) => job.failedReason))].slice(0, 5) },
    queueDrained,
    fiveHundredsOtherThan503: fiveHundreds,
    // With --redis-kill, losing what Redis had not written to disk is the expected result, and counted.
    pass: queueDrained && ledger.appliedTwice === 0 && fiveHundreds === 0 && (opts.redisKill || clean),
  };
}

if (scenario !== 'mixed') {
  const fault = scenario as Fault;
  const outage = {
    fault,
    downS: flag('down', fault === 'postgres-outage' ? 600 : 60),
    rate: flag('rate', 30),
    users: flag('users', 200),
    warmS: flag('warm', 30),
  };
  report(
    withCleanup('cos-soak-', (dir, onCleanup) => runDependencyFault(dir, onCleanup, outage)),
    printOutageReport,
  );
} else {
  report(
    withCleanup('cos-soak-', run, () => traffic?.stop()),
    printReport,
  );
}

/** Prints the result (or its JSON), and exits 0 only when it passed. */
function report<R extends { pass: boolean }>(running: Promise<R>, print: (result: R) => void): void {
  running.then(
    (result) => {
      if (opts.json) process.stdout.write(`${JSON.stringify(result)}\n`);
      else print(result);
      process.exit(result.pass ? 0 : 1);
    },
    (error: unknown) => {
      log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      process.exit(1);
    },
  );
}
