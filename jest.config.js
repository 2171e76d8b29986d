/** Tests run against real Postgres and Redis started by test/support/global-setup.ts. */
const project = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  // Every response the tests get from the API is checked against its OpenAPI document.
  setupFilesAfterEnv: ['<rootDir>/test/support/openapi-checks.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { isolatedModules: true, tsconfig: 'tsconfig.json' }] },
};

/**
 * The suites that exercise Redis, run a second time against a 3-master Redis Cluster
 * (docs/TESTING.md#redis-cluster): keys, scripts, queues and pub/sub on a cluster. A suite that
 * points REDIS_URL at a dead port gets the same dead seed for its cluster client (test-env.ts).
 * Suites that cut or count Redis do it through a proxy per node (test/support/redis-proxy.ts).
 * Not here: the suites that speak only Postgres.
 */
const CLUSTER_SUITES = [
  'integration/auth',
  'integration/cli',
  'integration/context',
  'integration/dashboard-keys',
  'integration/dashboard-forms',
  'integration/dashboard-session',
  'integration/dashboard-webhooks',
  'integration/erasure-race',
  'integration/isolation',
  'integration/learning',
  'integration/limiter-window',
  'integration/limiter-late',
  'integration/metering-5xx',
  'integration/outcome',
  'integration/profile',
  'integration/profile-cache',
  'integration/profile-round-trip',
  'integration/rate-limit',
  'integration/admission-leases',
  'integration/read-your-outcomes',
  'integration/sign-in-throttle',
  'integration/test-data-reset',
  'integration/traffic-recording',
  'integration/usage-flush',
  'integration/worker-batch-writes',
  'integration/worker-partitions',
  'integration/cli-users',
  'integration/dashboard-patterns',
  'integration/dashboard-traffic',
  'integration/dashboard-audit',
  'integration/evaluate',
  'integration/http-fuzz',
  'integration/http-protocol',
  'integration/metrics',
  'integration/openapi',
  'integration/population-loader',
  'integration/postgres-outage',
  'integration/request-input',
  'integration/sdk',
  'integration/traffic-patterns',
  'integration/worker-ops',
  'e2e/dashboard-browser',
  'e2e/postgres-outage',
  'integration/auth-postgres-down',
  'integration/health',
  'integration/idempotency',
  'integration/coalesced-writes',
  'integration/propagated-writes',
  'e2e/api-processes',
  'e2e/limiter-two-apis',
  'e2e/traffic-processes',
  'e2e/cluster-burst',
  'e2e/cluster-failover',
  // Their API never reaches a cluster seed: its client holds the commands, the request deadline answers 503.
  'integration/unavailable',
  'integration/sdk-retries',
  'integration/hot-path',
  'integration/decision-log',
  'integration/outcome-claim-rollback',
  'integration/worker-jobs',
  'e2e/worker-durability',
  'integration/credential-changes',
  'integration/erasure-fingerprints',
  // Its test of the default METRICS_PORT waits until it holds the port itself.
  'e2e/metrics',
  // Webhooks: the relay's and deliveries' queue, and the usage flush that records quota thresholds.
  'integration/webhook-delivery',
  'integration/webhook-outbox',
  'e2e/webhook-durability',
];

module.exports = {
  testTimeout: 60000,
  maxWorkers: 2,
  projects: [
    {
      ...project,
      displayName: 'single',
      testMatch: ['**/*.test.ts'],
      // The cluster-only suites start their own cluster (or need the cluster project's).
      testPathIgnorePatterns: ['/test/e2e/cluster-'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
    {
      ...project,
      displayName: 'cluster',
      testMatch: CLUSTER_SUITES.map((suite) => `<rootDir>/test/${suite}.test.ts`),
      setupFiles: ['<rootDir>/test/support/cluster-mode.ts'],
      globalSetup: '<rootDir>/test/support/cluster-global-setup.ts',
      globalTeardown: '<rootDir>/test/support/cluster-global-teardown.ts',
    },
  ],
};
