import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import { freePort } from '../../scripts/local-services';
import { loadWorkerConfig } from '../../shared/config/config';
import { EVENTS_QUEUE } from '../../shared/jobs/catalog';
import { startOpsServer } from '../../worker/ops-server';
import type { RunningWorker } from '../../worker/worker';
import { eventually, startHarness, type Harness } from '../support/harness';
import { sampleValue } from '../support/prometheus';

/** The worker's HTTP listener (healthz, readyz, metrics) on an in-process worker. */
const token = 'worker-admin-token-0123456789';
let h: Harness;
let worker: RunningWorker;
let server: Server;
let port: number;
let queue: Queue;
beforeAll(async () => {
  h = await startHarness();
  worker = h.startWorker();
  port = await freePort();
  // On the host the worker's config gives when HOST is unset.
  const { HOST: _host, ...unset } = h.env.processEnv();
  server = await startOpsServer(port, loadWorkerConfig(unset).HOST, { ...worker, metricsToken: token });
  queue = new Queue(EVENTS_QUEUE, { connection: h.env.redis, prefix: h.env.keys.queuePrefixes[0]! });
});
afterAll(async () => {
  server.close();
  await queue.close();
  await h.close();
});

const get = (path: string, init: RequestInit = {}) => fetch(`http://127.0.0.1:${port}${path}`, init);
const scrape = async () => {
  const res = await get('/metrics', { headers: { Authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return res.text();
};

describe('worker ops listener', () => {
  it('answers /healthz 200 and /readyz 200 with both dependencies reachable', async () => {
    const health = await get('/healthz');
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await eventually(async () => {
      const res = await get('/readyz');
      return res.status === 200 ? res : null;
    });
    expect(await ready.json()).toEqual({ status: 'ok', checks: { redis: 'ok', postgres: 'ok' } });
  });

  it('requires ADMIN_TOKEN for /metrics when configured, with the API error envelope', async () => {
    const res = await get('/metrics', { headers: { Authorization: 'Bearer not-the-token-0123456789' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await res.json()).toEqual({
      error: {
        code: 'UNAUTHORIZED',
        message: expect.stringContaining('ADMIN_TOKEN'),
        statusCode: 401,
        traceId: res.headers.get('x-request-id'),
        docUrl: '/docs#error-unauthorized',
      },
    });
  });

  it('answers OPTIONS with 204, other methods with 405 and other paths with 404, in the error envelope', async () => {
    const post = await get('/metrics', { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(await post.json()).toMatchObject({ error: { code: 'METHOD_NOT_ALLOWED', statusCode: 405 } });
    const options = await get('/readyz', { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('GET, HEAD');
    const missing = await get('/v1/context');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: 'NOT_FOUND', statusCode: 404 } });
  });

  it('reports the queues by state, read from Redis at scrape time', async () => {
    await queue.add('outcome', { requestId: 'never-fetched' }, { jobId: 'metrics-delayed', delay: 3_600_000 });
    const text = await scrape();
    expect(sampleValue(text, 'cos_queue_jobs', { queue: 'events', state: 'delayed' })).toBe(1);
    expect(sampleValue(text, 'cos_queue_jobs', { queue: 'events', state: 'waiting' })).toBe(0);
    expect(sampleValue(text, 'cos_queue_jobs', { queue: 'maintenance', state: 'failed' })).toBe(0);
    await queue.remove('metrics-delayed');
  });

  it('reports the partitions it consumes: all of them while it is the only worker', async () => {
    await worker.joined;
    const text = await scrape();
    expect(sampleValue(text, 'cos_worker_partitions_owned', {})).toBe(h.env.keys.queuePrefixes.length);
    expect(sampleValue(text, 'cos_worker_group_members', {})).toBe(1);
  });

  it('counts a job that fails without retries (invalid payload) as a final failure', async () => {
    const final = { queue: 'events', final: 'true' };
    expect(sampleValue(await scrape(), 'cos_worker_jobs_failed_total', final)).toBe(0);
    await queue.add('outcome', { requestId: 42 }, { jobId: 'metrics-broken', attempts: 5 });
    await eventually(async () => sampleValue(await scrape(), 'cos_worker_jobs_failed_total', final) === 1);
    expect(sampleValue(await scrape(), 'cos_worker_jobs_failed_total', { queue: 'events', final: 'false' })).toBe(0);
  });

  it('listens on 127.0.0.1 without HOST, and on the address HOST names when set', async () => {
    expect(server.address()).toMatchObject({ address: '127.0.0.1', port });
    // All of 127.0.0.0/8 is this machine on Linux; a listener on 127.0.0.2 alone is not on 127.0.0.1.
    const other = await startOpsServer(0, '127.0.0.2', worker);
    try {
      const { address, port: otherPort } = other.address() as AddressInfo;
      expect(address).toBe('127.0.0.2');
      expect((await fetch(`http://127.0.0.2:${otherPort}/healthz`)).status).toBe(200);
      await expect(fetch(`http://127.0.0.1:${otherPort}/healthz`)).rejects.toThrow();
    } finally {
      other.close();
    }
  });

  it('refuses to start a second listener on a port in use', async () => {
    await expect(startOpsServer(port, '127.0.0.1', worker)).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });
});
