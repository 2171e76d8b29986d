import { ConfigError, loadApiConfig, loadCliConfig, loadDashboardConfig, loadWorkerConfig } from '../../shared/config/config';

const BASE = {
  DATABASE_URL: 'postgres://cos:cos@localhost:5432/cos',
  REDIS_URL: 'redis://localhost:6379',
  COS_SECRET: 'a-production-secret-of-32-chars!',
};

function configError(load: () => unknown): ConfigError {
  try {
    load();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe.each([
  ['loadApiConfig', loadApiConfig],
  ['loadWorkerConfig', loadWorkerConfig],
  ['loadCliConfig', loadCliConfig],
  ['loadDashboardConfig', loadDashboardConfig],
] as const)('%s', (_name, load) => {
  it('accepts a complete production environment', () => {
    const config = load({ ...BASE });
    expect(config.NODE_ENV).toBe('production');
    expect(config.COS_SECRET).toBe(BASE.COS_SECRET);
    expect(config.DATABASE_URL).toBe(BASE.DATABASE_URL);
  });

  it('lists every bad variable when several are missing or invalid', () => {
    const error = configError(() => load({ COS_SECRET: BASE.COS_SECRET, LOG_LEVEL: 'loud', OUTCOME_WINDOW: '7' }));
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'LOG_LEVEL', 'OUTCOME_WINDOW']) expect(error.message).toContain(name);
  });

  it('takes a Redis Cluster instead of REDIS_URL, with 8 queue partitions on a cluster and on one node unless told otherwise', () => {
    const { REDIS_URL: _url, ...withoutUrl } = BASE;
    const config = load({ ...withoutUrl, REDIS_CLUSTER_NODES: '10.0.0.1:7000, redis-b.internal:7001' });
    expect(config.REDIS_CLUSTER_NODES).toEqual([
      { host: '10.0.0.1', port: 7000 },
      { host: 'redis-b.internal', port: 7001 },
    ]);
    expect(config.QUEUE_PARTITIONS).toBe(8);
    expect(load({ ...withoutUrl, REDIS_CLUSTER_NODES: '10.0.0.1:7000', QUEUE_PARTITIONS: '32' }).QUEUE_PARTITIONS).toBe(32);
    expect(load({ ...BASE }).QUEUE_PARTITIONS).toBe(8);
    expect(load({ ...BASE, QUEUE_PARTITIONS: '1' }).QUEUE_PARTITIONS).toBe(1);
    expect(configError(() => load({ ...withoutUrl, REDIS_CLUSTER_NODES: '10.0.0.1' })).message).toContain('REDIS_CLUSTER_NODES');
    expect(configError(() => load({ ...BASE, QUEUE_PARTITIONS: '0' })).message).toContain('QUEUE_PARTITIONS');
  });

  it("takes a cluster's NAT map (announced=reachable) and its nodes' credentials", () => {
    const { REDIS_URL: _url, ...withoutUrl } = BASE;
    const config = load({
      ...withoutUrl,
      REDIS_CLUSTER_NODES: 'redis-a.example:6379',
      REDIS_CLUSTER_NAT_MAP: '10.0.0.5:6379=redis-a.example:6379, 10.0.0.6:6379=redis-b.example:6380',
      REDIS_CLUSTER_USERNAME: 'cos',
      REDIS_CLUSTER_PASSWORD: 'secret-of-the-nodes',
    });
    expect(config.REDIS_CLUSTER_NAT_MAP).toEqual({
      '10.0.0.5:6379': { host: 'redis-a.example', port: 6379 },
      '10.0.0.6:6379': { host: 'redis-b.example', port: 6380 },
    });
    expect([config.REDIS_CLUSTER_USERNAME, config.REDIS_CLUSTER_PASSWORD]).toEqual(['cos', 'secret-of-the-nodes']);
    const bad = configError(() => load({ ...withoutUrl, REDIS_CLUSTER_NODES: 'a:1', REDIS_CLUSTER_NAT_MAP: '10.0.0.5:6379' }));
    expect(bad.message).toContain('REDIS_CLUSTER_NAT_MAP');
  });

  it('requires COS_SECRET when NODE_ENV is unset (production is the default)', () => {
    const { COS_SECRET: _secret, ...withoutSecret } = BASE;
    expect(configError(() => load(withoutSecret)).message).toContain('COS_SECRET');
    expect(configError(() => load({ ...withoutSecret, NODE_ENV: 'production' })).message).toContain('COS_SECRET');
  });

  it('rejects a COS_SECRET shorter than 16 characters', () => {
    expect(configError(() => load({ ...BASE, COS_SECRET: 'short' })).message).toContain('COS_SECRET');
  });

  it.each(['development', 'test'])('falls back to a development secret when NODE_ENV=%s', (nodeEnv) => {
    const { COS_SECRET: _secret, ...withoutSecret } = BASE;
    const config = load({ ...withoutSecret, NODE_ENV: nodeEnv });
    expect(config.COS_SECRET.length).toBeGreaterThanOrEqual(16);
    expect(load({ ...BASE, NODE_ENV: nodeEnv }).COS_SECRET).toBe(BASE.COS_SECRET);
  });

  it('parses OUTCOME_WINDOW as a duration in ms, 7 days by default', () => {
    expect(load({ ...BASE }).OUTCOME_WINDOW).toBe(7 * 86_400_000);
    expect(load({ ...BASE, OUTCOME_WINDOW: '24h' }).OUTCOME_WINDOW).toBe(86_400_000);
    expect(configError(() => load({ ...BASE, OUTCOME_WINDOW: '5w' })).message).toContain('OUTCOME_WINDOW');
  });

  it('rejects an unknown NODE_ENV instead of treating it as production or development', () => {
    expect(configError(() => load({ ...BASE, NODE_ENV: 'staging' })).message).toContain('NODE_ENV');
  });
});

describe('loadApiConfig', () => {
  it('reports a missing COS_SECRET together with the other bad variables, not on a second run', () => {
    // Every bad variable is printed: an operator fixing DATABASE_URL
    // should not discover the missing secret only on the next boot.
    const error = configError(() => loadApiConfig({}));
    expect(error.message).toContain('DATABASE_URL');
    expect(error.message).toContain('REDIS_URL');
    expect(error.message).toContain('COS_SECRET');
  });

  it('parses SERVE_ENVIRONMENTS as a comma list of test|live, both by default', () => {
    expect(loadApiConfig({ ...BASE }).SERVE_ENVIRONMENTS).toEqual(['test', 'live']);
    expect(loadApiConfig({ ...BASE, SERVE_ENVIRONMENTS: 'test' }).SERVE_ENVIRONMENTS).toEqual(['test']);
    expect(loadApiConfig({ ...BASE, SERVE_ENVIRONMENTS: 'live' }).SERVE_ENVIRONMENTS).toEqual(['live']);
    expect(loadApiConfig({ ...BASE, SERVE_ENVIRONMENTS: 'test,live' }).SERVE_ENVIRONMENTS).toEqual(['test', 'live']);
    expect(loadApiConfig({ ...BASE, SERVE_ENVIRONMENTS: ' live , test ' }).SERVE_ENVIRONMENTS).toEqual(['live', 'test']);
  });

  it('treats an empty SERVE_ENVIRONMENTS as unset (both environments)', () => {
    expect(loadApiConfig({ ...BASE, SERVE_ENVIRONMENTS: '' }).SERVE_ENVIRONMENTS).toEqual(['test', 'live']);
  });

  it.each(['prod', 'test,prod', ','])('rejects SERVE_ENVIRONMENTS=%p', (value) => {
    expect(configError(() => loadApiConfig({ ...BASE, SERVE_ENVIRONMENTS: value })).message).toContain('SERVE_ENVIRONMENTS');
  });

  it('coerces PORT to a number, 3000 by default', () => {
    expect(loadApiConfig({ ...BASE }).PORT).toBe(3000);
    expect(loadApiConfig({ ...BASE, PORT: '8080' }).PORT).toBe(8080);
    expect(loadApiConfig({ ...BASE, PORT: '0' }).PORT).toBe(0);
  });

  it.each(['abc', '70000', '-1', '80.5'])('rejects PORT=%p', (port) => {
    expect(configError(() => loadApiConfig({ ...BASE, PORT: port })).message).toContain('PORT');
  });

  it('does not turn an empty PORT into port 0 (a random port) silently', () => {
    let port: number | undefined;
    try {
      port = loadApiConfig({ ...BASE, PORT: '' }).PORT;
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return;
    }
    expect(port).toBe(3000);
  });

  it('parses KEY_REFRESH_INTERVAL as a duration, 1 s by default', () => {
    expect(loadApiConfig({ ...BASE }).KEY_REFRESH_INTERVAL).toBe(1000);
    expect(loadApiConfig({ ...BASE, KEY_REFRESH_INTERVAL: '5s' }).KEY_REFRESH_INTERVAL).toBe(5000);
  });
});

describe('loadWorkerConfig', () => {
  it('coerces WORKER_CONCURRENCY and rejects zero', () => {
    expect(loadWorkerConfig({ ...BASE }).WORKER_CONCURRENCY).toBe(4096);
    expect(loadWorkerConfig({ ...BASE }).WORKER_BATCH_SIZE).toBe(5000);
    expect(loadWorkerConfig({ ...BASE, WORKER_CONCURRENCY: '8' }).WORKER_CONCURRENCY).toBe(8);
    expect(configError(() => loadWorkerConfig({ ...BASE, WORKER_CONCURRENCY: '0' })).message).toContain('WORKER_CONCURRENCY');
  });

  it('reads the retry schedule of failed jobs: 1 s doubling up to 30 s by default, shorter for tests, the cap never below the first delay', () => {
    expect(loadWorkerConfig({ ...BASE })).toMatchObject({ JOB_RETRY_DELAY: 1000, JOB_RETRY_MAX_DELAY: 30_000 });
    expect(loadWorkerConfig({ ...BASE, JOB_RETRY_DELAY: '5ms', JOB_RETRY_MAX_DELAY: '200ms' })).toMatchObject({
      JOB_RETRY_DELAY: 5,
      JOB_RETRY_MAX_DELAY: 200,
    });
    expect(configError(() => loadWorkerConfig({ ...BASE, JOB_RETRY_DELAY: '2m', JOB_RETRY_MAX_DELAY: '1m' })).message).toContain(
      'JOB_RETRY_MAX_DELAY',
    );
  });

  it('reads the worker heartbeat: every 1 s, taken for dead after 5 s, the timeout at least two intervals', () => {
    expect(loadWorkerConfig({ ...BASE })).toMatchObject({ WORKER_HEARTBEAT_INTERVAL: 1000, WORKER_HEARTBEAT_TIMEOUT: 5000 });
    expect(loadWorkerConfig({ ...BASE, WORKER_HEARTBEAT_INTERVAL: '200ms', WORKER_HEARTBEAT_TIMEOUT: '1s' })).toMatchObject({
      WORKER_HEARTBEAT_INTERVAL: 200,
      WORKER_HEARTBEAT_TIMEOUT: 1000,
    });
    expect(
      configError(() => loadWorkerConfig({ ...BASE, WORKER_HEARTBEAT_INTERVAL: '2s', WORKER_HEARTBEAT_TIMEOUT: '3s' })).message,
    ).toContain('WORKER_HEARTBEAT_TIMEOUT');
  });

  it('reads WORKER_DRAIN_TIMEOUT as a duration: 20 s by default', () => {
    expect(loadWorkerConfig({ ...BASE }).WORKER_DRAIN_TIMEOUT).toBe(20_000);
    expect(loadWorkerConfig({ ...BASE, WORKER_DRAIN_TIMEOUT: '2s' }).WORKER_DRAIN_TIMEOUT).toBe(2000);
    expect(configError(() => loadWorkerConfig({ ...BASE, WORKER_DRAIN_TIMEOUT: 'soon' })).message).toContain('WORKER_DRAIN_TIMEOUT');
  });

  it('reads WORKER_NICE: 10 by default, 0 to 19', () => {
    expect(loadWorkerConfig({ ...BASE }).WORKER_NICE).toBe(10);
    expect(loadWorkerConfig({ ...BASE, WORKER_NICE: '0' }).WORKER_NICE).toBe(0);
    expect(configError(() => loadWorkerConfig({ ...BASE, WORKER_NICE: '20' })).message).toContain('WORKER_NICE');
    expect(configError(() => loadWorkerConfig({ ...BASE, WORKER_NICE: '-5' })).message).toContain('WORKER_NICE');
  });

  it('reads METRICS_PORT as a port, 9464 by default and 0 for no listener', () => {
    expect(loadWorkerConfig({ ...BASE }).METRICS_PORT).toBe(9464);
    expect(loadWorkerConfig({ ...BASE, METRICS_PORT: '' }).METRICS_PORT).toBe(9464);
    expect(loadWorkerConfig({ ...BASE, METRICS_PORT: '9100' }).METRICS_PORT).toBe(9100);
    expect(loadWorkerConfig({ ...BASE, METRICS_PORT: '0' }).METRICS_PORT).toBe(0);
  });

  it.each(['abc', '70000', '-1', '94.5'])('rejects METRICS_PORT=%p', (port) => {
    expect(configError(() => loadWorkerConfig({ ...BASE, METRICS_PORT: port })).message).toContain('METRICS_PORT');
  });
});

describe.each([
  ['loadApiConfig', loadApiConfig],
  ['loadWorkerConfig', loadWorkerConfig],
  ['loadDashboardConfig', loadDashboardConfig],
] as const)('%s HOST', (_name, load) => {
  it('listens on 127.0.0.1 (this machine only) unless HOST says otherwise', () => {
    expect(load({ ...BASE }).HOST).toBe('127.0.0.1');
    expect(load({ ...BASE, HOST: '' }).HOST).toBe('127.0.0.1');
  });

  it.each(['0.0.0.0', '::', '::1', '10.1.2.3', 'fd00::2', 'localhost', 'api.internal'])('takes HOST=%p', (host) => {
    expect(load({ ...BASE, HOST: host }).HOST).toBe(host);
    expect(load({ ...BASE, HOST: ` ${host} ` }).HOST).toBe(host);
  });

  it.each(['http://0.0.0.0', '0.0.0.0:3000', '[::1]', '256.1.1.1', '10.1.2', 'two words', 'under_score!'])(
    'rejects HOST=%p, saying what it must be',
    (host) => {
      const message = configError(() => load({ ...BASE, HOST: host })).message;
      expect(message).toContain('HOST: must be an IP address or a host name to listen on');
      expect(message).toContain('0.0.0.0 (every interface)');
    },
  );
});

it('the CLI has no listener, so no HOST', () => {
  expect(loadCliConfig({ ...BASE, HOST: 'not a host' })).not.toHaveProperty('HOST');
});

describe.each([
  ['loadApiConfig', loadApiConfig],
  ['loadWorkerConfig', loadWorkerConfig],
] as const)('%s ADMIN_TOKEN', (_name, load) => {
  it('is optional, and at least 16 characters when set', () => {
    expect(load({ ...BASE }).ADMIN_TOKEN).toBeUndefined();
    expect(load({ ...BASE, ADMIN_TOKEN: 'an-admin-token-of-32-characters!' }).ADMIN_TOKEN).toBe('an-admin-token-of-32-characters!');
    expect(configError(() => load({ ...BASE, ADMIN_TOKEN: 'short' })).message).toContain('ADMIN_TOKEN');
  });
});

describe('loadDashboardConfig', () => {
  it('listens on 3001 with a 12 h idle expiry and cookies without Secure unless told otherwise', () => {
    expect(loadDashboardConfig({ ...BASE })).toMatchObject({
      DASHBOARD_PORT: 3001,
      DASHBOARD_SESSION_IDLE: 12 * 3_600_000,
      DASHBOARD_SECURE_COOKIES: false,
    });
    const tls = loadDashboardConfig({ ...BASE, DASHBOARD_PORT: '8443', DASHBOARD_SESSION_IDLE: '30m', DASHBOARD_SECURE_COOKIES: 'true' });
    expect(tls).toMatchObject({ DASHBOARD_PORT: 8443, DASHBOARD_SESSION_IDLE: 1_800_000, DASHBOARD_SECURE_COOKIES: true });
  });

  it('ends sessions 7 days after sign-in by default (DASHBOARD_SESSION_MAX_AGE, a duration)', () => {
    expect(loadDashboardConfig({ ...BASE }).DASHBOARD_SESSION_MAX_AGE).toBe(7 * 86_400_000);
    expect(loadDashboardConfig({ ...BASE, DASHBOARD_SESSION_MAX_AGE: '24h' }).DASHBOARD_SESSION_MAX_AGE).toBe(86_400_000);
  });

  it.each([
    ['DASHBOARD_SECURE_COOKIES', 'yes'],
    ['DASHBOARD_SESSION_IDLE', '12'],
    ['DASHBOARD_SESSION_MAX_AGE', 'a week'],
    ['DASHBOARD_PORT', '70000'],
  ])('rejects %s=%p', (name, value) => {
    expect(configError(() => loadDashboardConfig({ ...BASE, [name]: value })).message).toContain(name);
  });

  it('reads TRUST_PROXY as a list of proxies', () => {
    expect(loadDashboardConfig({ ...BASE, TRUST_PROXY: 'loopback, 10.0.0.0/8' }).TRUST_PROXY).toEqual(['loopback', '10.0.0.0/8']);
    expect(loadDashboardConfig({ ...BASE }).TRUST_PROXY).toBeUndefined();
  });
});
