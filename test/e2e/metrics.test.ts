import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { freePort } from '../../scripts/local-services';
import { DEFAULT_METRICS_PORT } from '../../shared/config/config';
import { KeyService } from '../../shared/credentials/key.service';
import { eventually } from '../support/harness';
import { client, spawnApi, spawnBuilt, stop, type Spawned } from '../support/processes';
import { sampleValue } from '../support/prometheus';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';

/** /metrics of the built processes: the api as two processes (API_PROCESSES=2) and a worker on METRICS_PORT. */
let env: TestEnv;
let api: Spawned & { url: string };
let worker: Spawned;
let metricsUrl: string;
let key: string;

beforeAll(async () => {
  env = await createTestEnv();
  key = (await new KeyService(env.db, TEST_SECRET).create({ account: 'worker-metrics', environment: 'test' })).key;
  api = await spawnApi({ ...env.processEnv(), API_PROCESSES: '2' });
  // A port found free can be taken by another suite's process before the worker binds it: the
  // worker then exits saying so, and starts again on another (as spawnApi does for the API).
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}`;
    const workerEnv: NodeJS.ProcessEnv = env.processEnv({ METRICS_PORT: String(port), USAGE_FLUSH_INTERVAL: '1s', LOG_LEVEL: 'info' });
    delete workerEnv.WORKER_NICE; // this worker runs with the default niceness, which a test below checks
    worker = spawnBuilt('worker/main.js', workerEnv);
    const started = worker;
    const listening = await eventually(async () =>
      started.child.exitCode !== null ? 'exited' : started.output().includes('worker metrics listening') ? 'listening' : null,
    );
    if (listening === 'listening') break;
    if (attempt >= 3 || !started.output().includes('cannot listen on METRICS_PORT'))
      throw new Error(`worker did not start: ${started.output()}`);
  }
  await eventually(async () => (await fetch(`${metricsUrl}/readyz`)).ok);
});
afterAll(async () => {
  await Promise.all([worker, api].map((p) => stop(p, 'SIGKILL')));
  await env.close();
});

const scrape = async () => (await fetch(`${metricsUrl}/metrics`)).text();

describe('api /metrics with API_PROCESSES=2', () => {
  it("answers every scrape with both processes' metrics summed, whichever process takes it", async () => {
    // A new connection per scrape: the primary hands new connections to its processes in turn.
    const apiScrape = () =>
      new Promise<string>((resolve, reject) => {
        http
          .get(`${api.url}/metrics`, { agent: false }, (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (text += chunk));
            res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`status ${res.statusCode}`))));
          })
          .on('error', reject);
      });
    const contexts = (text: string) =>
      sampleValue(text, 'cos_http_request_duration_seconds_count', { route: 'context', status_code: '200' }) ?? 0;
    const before = contexts(await apiScrape());
    const api1 = client(api.url, key);
    for (let i = 0; i < 10; i++) expect((await api1.context(`cluster-metrics-${i}`)).status).toBe(200);
    for (let i = 0; i < 4; i++) {
      const text = await apiScrape();
      expect(contexts(text)).toBe(before + 10);
      expect(sampleValue(text, 'cos_dependency_up', { dependency: 'redis' })).toBe(1);
    }
  });
});

describe('worker process', () => {
  it('runs every thread at a lower CPU priority than the API (WORKER_NICE, 10 by default)', () => {
    // /proc/<pid>/task/<tid>/stat: the 19th field is the nice value; the command name may hold spaces, so count after ')'.
    const niceOf = (pid: number, tid = pid) =>
      Number(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(')').pop()!.trim().split(' ')[16]);
    const threads = (pid: number) => readdirSync(`/proc/${pid}/task`).map(Number);
    const expected = Math.max(10, niceOf(process.pid));
    expect(threads(worker.child.pid!).length).toBeGreaterThan(1);
    for (const tid of threads(worker.child.pid!)) expect(niceOf(worker.child.pid!, tid)).toBe(expected);
    expect(niceOf(api.child.pid!)).toBe(niceOf(process.pid));
  });
});

describe('worker /metrics (built process)', () => {
  it('answers /healthz and /readyz on METRICS_PORT', async () => {
    expect(await (await fetch(`${metricsUrl}/healthz`)).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${metricsUrl}/readyz`)).json()).toEqual({ status: 'ok', checks: { redis: 'ok', postgres: 'ok' } });
  });

  it('counts the outcomes it applied and their lag from acceptance to commit, and the batch sizes', async () => {
    const api1 = client(api.url, key);
    const outcomes = 5;
    for (let i = 0; i < outcomes; i++) {
      const context = await api1.context(`lag-user-${i}`);
      expect(context.status).toBe(200);
      expect((await api1.outcome({ requestId: context.body.requestId, started: true })).status).toBe(202);
    }
    const text = await eventually(async () => {
      const current = await scrape();
      return sampleValue(current, 'cos_worker_outcomes_applied_total') === outcomes ? current : null;
    });
    expect(sampleValue(text, 'cos_worker_outcome_apply_lag_seconds_count')).toBe(outcomes);
    expect(sampleValue(text, 'cos_worker_outcome_apply_lag_seconds_bucket', { le: '+Inf' })).toBe(outcomes);
    expect(sampleValue(text, 'cos_worker_outcome_apply_lag_seconds_sum')).toBeGreaterThan(0);
    // Every decision and outcome job went through a committed batch.
    expect(sampleValue(text, 'cos_worker_batch_size_count')).toBeGreaterThanOrEqual(1);
    expect(sampleValue(text, 'cos_worker_batch_size_sum')).toBeGreaterThanOrEqual(2 * outcomes);
    expect(sampleValue(text, 'cos_queue_jobs', { queue: 'events', state: 'waiting' })).toBe(0);
    expect(sampleValue(text, 'cos_worker_jobs_failed_total', { queue: 'events', final: 'true' })).toBe(0);
    expect(sampleValue(text, 'cos_dependency_up', { dependency: 'redis' })).toBe(1);
    expect(sampleValue(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('counts its usage flush runs', async () => {
    await eventually(async () => (sampleValue(await scrape(), 'cos_worker_usage_flush_runs_total', { result: 'ok' }) ?? 0) >= 1);
    expect(sampleValue(await scrape(), 'cos_worker_usage_flush_runs_total', { result: 'error' })).toBe(0);
  });

  it('exits with code 1 and says why when METRICS_PORT is in use', async () => {
    const busy = spawnBuilt('worker/main.js', env.processEnv({ METRICS_PORT: new URL(metricsUrl).port }));
    expect(await busy.exited).toBe(1);
    expect(busy.output()).toContain('cannot listen on METRICS_PORT');
  });

  it('gives way to a free port when the default METRICS_PORT is taken, so workers can share a host', async () => {
    // Holds the default port itself — waiting while the other test pass's run of this test holds
    // it — so that the worker certainly finds it taken.
    const holder = await eventually(
      async () => {
        const server = http.createServer();
        const held = await new Promise<boolean>((resolve) => {
          server.once('error', () => resolve(false));
          server.listen(DEFAULT_METRICS_PORT, () => resolve(true));
        });
        return held ? server : null;
      },
      45_000,
      100,
    );
    const second = spawnBuilt('worker/main.js', env.processEnv({ METRICS_PORT: '' }));
    try {
      const line = await eventually(async () =>
        second
          .output()
          .split('\n')
          .find((l) => l.includes('metrics listening on a free port')),
      );
      const { port, defaultPort } = JSON.parse(line) as { port: number; defaultPort: number };
      expect(defaultPort).toBe(DEFAULT_METRICS_PORT);
      expect(port).not.toBe(DEFAULT_METRICS_PORT);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      expect(second.child.exitCode).toBeNull();
    } finally {
      await stop(second, 'SIGKILL');
      holder.close();
    }
  });
});
