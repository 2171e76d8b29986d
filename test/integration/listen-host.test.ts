import { freePort } from '../../scripts/local-services';
import { UNTRUSTED_PROXY_WARNING } from '../../dashboard/http/tls-proxy';
import { spawnDashboard } from '../support/dashboard';
import { eventually } from '../support/harness';
import { spawnApi, spawnBuilt, statusOnNewConnection, stop, type Spawned } from '../support/processes';
import { createTestEnv, type TestEnv } from '../support/test-env';

/**
 * HOST: the built api, dashboard and worker listen on 127.0.0.1 unless it says otherwise. On
 * Linux all of 127.0.0.0/8 is this machine, so 127.0.0.2 tells the bindings apart without a
 * network: a listener on 127.0.0.1 does not answer there, one on every interface (0.0.0.0) or on
 * 127.0.0.2 itself does.
 */
const OTHER_LOOPBACK = '127.0.0.2';
/** An address of no interface here (TEST-NET-3): listening on it cannot work. */
const NOT_OURS = '203.0.113.7';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(async () => {
  await env.close();
});

/** The test processes' environment with HOST as given, or unset. */
const processEnv = (extra: Record<string, string>, host?: string) => {
  const vars = env.processEnv({ LOG_LEVEL: 'info', ...extra });
  delete vars.HOST;
  return host === undefined ? vars : { ...vars, HOST: host };
};

/** The status of GET http://host:port/path on a new connection; 0 when nothing answers there. */
const status = (host: string, port: number, path = '/healthz') => statusOnNewConnection(`http://${host}:${port}${path}`);

/** The fields of each "<message>" log line so far. */
const logLines = (spawned: Spawned, message: string) =>
  spawned
    .output()
    .split('\n')
    .filter((line) => line.includes(`"msg":"${message}"`))
    .map((line) => JSON.parse(line) as { host: string; port: number; pid: number });

const portOf = (url: string) => Number(new URL(url).port);

describe('api', () => {
  it('listens on 127.0.0.1 by default, and not on the other interfaces', async () => {
    const api = await spawnApi(processEnv({}));
    try {
      const port = portOf(api.url);
      expect(logLines(api, 'api listening')).toEqual([expect.objectContaining({ host: '127.0.0.1', port })]);
      expect(await status('127.0.0.1', port)).toBe(200);
      expect(await status(OTHER_LOOPBACK, port)).toBe(0);
    } finally {
      await stop(api);
    }
  });

  it('with API_PROCESSES=2 and HOST=0.0.0.0, both processes take connections on every interface', async () => {
    const api = await spawnApi(processEnv({ API_PROCESSES: '2' }, '0.0.0.0'));
    try {
      const port = portOf(api.url);
      const lines = await eventually(async () => {
        const found = logLines(api, 'api listening');
        return found.length === 2 ? found : null;
      });
      expect(lines).toEqual([expect.objectContaining({ host: '0.0.0.0', port }), expect.objectContaining({ host: '0.0.0.0', port })]);
      expect(new Set(lines.map((line) => line.pid)).size).toBe(2);
      // Each connection goes to the next process: several in a row reach both.
      for (let i = 0; i < 6; i++) expect(await status(OTHER_LOOPBACK, port, '/readyz')).toBe(200);
      expect(await status('127.0.0.1', port, '/readyz')).toBe(200);
    } finally {
      await stop(api);
    }
  });

  it('exits 1 saying what to change when HOST is not an address of this machine', async () => {
    const api = spawnBuilt('api/main.js', processEnv({ PORT: String(await freePort()) }, NOT_OURS));
    expect(await api.exited).toBe(1);
    expect(api.output()).toContain(`cannot listen on ${NOT_OURS}:`);
    expect(api.output()).toContain('HOST is not an address of this machine');
  });

  it('exits 1 with the variable named when HOST is not an address or a host name', async () => {
    const api = spawnBuilt('api/main.js', processEnv({}, 'http://0.0.0.0'));
    expect(await api.exited).toBe(1);
    expect(api.output()).toContain('HOST: must be an IP address or a host name to listen on');
  });
});

describe('dashboard', () => {
  it('listens on 127.0.0.1 by default, and not on the other interfaces; plain cookies: no HSTS, no warning', async () => {
    const dashboard = await spawnDashboard(processEnv({}));
    try {
      const port = portOf(dashboard.url);
      expect(logLines(dashboard, 'dashboard listening')).toEqual([expect.objectContaining({ host: '127.0.0.1', port })]);
      expect(await status(OTHER_LOOPBACK, port)).toBe(0);
      const res = await fetch(`${dashboard.url}/signin`);
      expect(res.headers.get('strict-transport-security')).toBeNull();
      expect(res.headers.getSetCookie()).toEqual([expect.stringMatching(/^cos_dashboard=/)]);
      expect(dashboard.output()).not.toContain(UNTRUSTED_PROXY_WARNING);
    } finally {
      await stop(dashboard);
    }
  });

  it('listens on every interface with HOST=0.0.0.0', async () => {
    const dashboard = await spawnDashboard(processEnv({}, '0.0.0.0'));
    try {
      const port = portOf(dashboard.url);
      expect(logLines(dashboard, 'dashboard listening')).toEqual([expect.objectContaining({ host: '0.0.0.0', port })]);
      expect(await status(OTHER_LOOPBACK, port)).toBe(200);
    } finally {
      await stop(dashboard);
    }
  });
});

describe('worker ops listener (METRICS_PORT)', () => {
  /** A worker listening on a free METRICS_PORT; again on another when a parallel test took the port first. */
  async function spawnWorker(host?: string): Promise<Spawned & { port: number }> {
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const worker = spawnBuilt('worker/main.js', processEnv({ METRICS_PORT: String(port) }, host));
      const outcome = await eventually(async () =>
        worker.child.exitCode !== null ? 'exited' : logLines(worker, 'worker metrics listening').length > 0 ? 'listening' : null,
      );
      if (outcome === 'listening') return { ...worker, port };
      if (attempt >= 3 || !worker.output().includes('EADDRINUSE')) throw new Error(`worker did not start: ${worker.output()}`);
    }
  }

  it('listens on 127.0.0.1 by default, and not on the other interfaces', async () => {
    const worker = await spawnWorker();
    try {
      expect(logLines(worker, 'worker metrics listening')).toEqual([expect.objectContaining({ host: '127.0.0.1', port: worker.port })]);
      expect(await status('127.0.0.1', worker.port)).toBe(200);
      expect(await status(OTHER_LOOPBACK, worker.port)).toBe(0);
    } finally {
      await stop(worker, 'SIGKILL');
    }
  });

  it('listens on the address HOST names, and there only', async () => {
    const worker = await spawnWorker(OTHER_LOOPBACK);
    try {
      expect(logLines(worker, 'worker metrics listening')).toEqual([expect.objectContaining({ host: OTHER_LOOPBACK, port: worker.port })]);
      expect(await status(OTHER_LOOPBACK, worker.port)).toBe(200);
      expect(await status('127.0.0.1', worker.port)).toBe(0);
    } finally {
      await stop(worker, 'SIGKILL');
    }
  });

  it('exits 1 saying so when HOST is not an address of this machine', async () => {
    const worker = spawnBuilt('worker/main.js', processEnv({ METRICS_PORT: String(await freePort()) }, NOT_OURS));
    expect(await worker.exited).toBe(1);
    expect(worker.output()).toContain('cannot listen on METRICS_PORT');
    expect(worker.output()).toContain('EADDRNOTAVAIL');
  });
});
