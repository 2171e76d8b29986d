import { performance } from 'node:perf_hooks';
import express, { type Request, type Response } from 'express';
import { Redis } from 'ioredis';
import { trafficObserver } from '../api/middleware/traffic.middleware';
import { redisKeys } from '../shared/redis/key-names';
import { countryResolver } from '../shared/geo/country';
import { createLogger } from '../shared/logger/logger';
import { TrafficRecorder } from '../shared/traffic/traffic-recorder';

/**
 * `npm run bench:traffic`: the API's cost of recording one request's traffic — the observer
 * reading `req.ip` (Express, with or without trust proxy), the memoised country lookup and the
 * in-memory counts — and, with REDIS_URL, the one-pipeline flush amortised over the requests
 * of a second. Reports CPU µs per request; compare with the context request's CPU per request
 * from `npm run bench:load`.
 *
 *   REDIS_URL=redis://… node dist/scripts/bench-traffic.js [--requests N] [--keys K] [--rate R]
 */
function arg(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
}

const REQUESTS = arg('requests', 2_000_000);
const KEYS = arg('keys', 1000);
/** Requests per second of the simulated process: how many requests one flush carries. */
const RATE = arg('rate', 5000);
const ENDPOINTS = ['context', 'outcome', 'profile.get'];
const STATUSES = [200, 200, 200, 200, 202, 404, 429];

function fakeResponses(trustProxy: string[] | false): Response[] {
  const app = express();
  app.set('trust proxy', trustProxy);
  const addresses = Array.from({ length: 500 }, (_, i) => `${8 + (i % 200)}.${(i * 7) % 256}.${(i * 13) % 256}.${i % 250}`);
  return Array.from({ length: 4096 }, (_, i) => {
    const req = Object.create(app.request) as Request;
    // Each key's clients come from two addresses.
    const address = addresses[((i % KEYS) * 2 + (i % 2)) % addresses.length];
    Object.assign(req, { app, headers: { 'x-forwarded-for': address }, socket: { remoteAddress: trustProxy ? '127.0.0.1' : address } });
    return {
      req,
      statusCode: STATUSES[i % STATUSES.length],
      locals: { presentedKeyId: `key_${i % KEYS}`, route: ENDPOINTS[i % 3] },
    } as unknown as Response;
  });
}

async function measure(label: string, trustProxy: string[] | false, redis: Redis | null): Promise<void> {
  // Counting alone never sends: a client that never connects stands in for Redis.
  const client = redis ?? new Redis({ lazyConnect: true });
  const recorder = new TrafficRecorder({
    redis: client,
    keys: redisKeys('bench'),
    countries: countryResolver(),
    logger: createLogger('silent', 'bench'),
  });
  const observe = trafficObserver(recorder, trustProxy !== false);
  const responses = fakeResponses(trustProxy);
  for (let i = 0; i < 50_000; i++) observe(responses[i % responses.length]!, 1 + (i % 50)); // warm-up
  if (redis) await recorder.flush();
  const cpu = process.cpuUsage();
  const start = performance.now();
  let flushes = 0;
  for (let i = 0; i < REQUESTS; i++) {
    observe(responses[i % responses.length]!, 0.3 + (i % 97) / 10);
    if (redis && (i + 1) % RATE === 0) {
      await recorder.flush();
      flushes++;
    }
  }
  const used = process.cpuUsage(cpu);
  const wall = performance.now() - start;
  const perRequest = ((used.user + used.system) / REQUESTS).toFixed(3);
  process.stdout.write(
    `${label}: ${REQUESTS} requests, ${KEYS} keys${redis ? `, a flush every ${RATE} requests (${flushes} flushes)` : ''}: ` +
      `${perRequest} µs CPU per request (${((wall * 1000) / REQUESTS).toFixed(3)} µs wall; Redis's own CPU not included)\n`,
  );
}

async function main(): Promise<void> {
  const redis = process.env.REDIS_URL ? new Redis(process.env.REDIS_URL) : null;
  await measure('record, no trust proxy', false, null);
  await measure('record, behind a trusted proxy', ['loopback'], null);
  if (redis) {
    await measure('record + flush', false, redis);
    redis.disconnect();
  }
}

void main();
