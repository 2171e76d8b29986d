// Lint rules: the recommended sets, plus the layering rules of docs/ARCHITECTURE.md#layering,
// checked by the local rule `cos/boundaries` on every import, export-from, require() and
// import() (relative paths resolved against the importing file):
//
// 1. The processes (api/, worker/, dashboard/, cli/) never import each other, and shared/
//    imports none of them.
// 2. Inside shared/, the foundations import no other part of shared/, and the clients (db/,
//    redis/) only the foundations.
// 3. The API's lean HTTP layer (api/http/, docs/adr/0016-hot-path.md) is reached only through
//    its index: no other module depends on how it works.
// 4. The Redis and Postgres clients (ioredis, connect-redis, pg, BullMQ's queues and workers, and
//    shared/redis/redis.ts, the client every Redis call goes through) are imported only by the
//    modules of CLIENT_ALLOW_LIST, each with its reason. Postgres is reached through Kysely's `Db`
//    handle, which every layer passes down, so an import rule cannot tell a query from a
//    hand-over; the rule covers the client libraries.
// 5. The dashboard's routes and views reach Postgres and Redis through its services
//    (dashboard/services/): they import no repository (`*.repository`; type-only imports of the
//    records one returns pass), nothing of shared/db/ or shared/redis/, and not Kysely.
//
// The SDK (a package of its own, without dependencies) imports only its own files and Node's
// built-in modules. Tests and scripts set up and inspect Redis and Postgres directly: the rules
// do not apply to them.
import path from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const PROCESSES = ['api', 'worker', 'dashboard', 'cli'];

/** Pure code with no I/O: what everything else in shared/ builds on. */
const SHARED_FOUNDATIONS = ['util', 'domain', 'errors', 'logger', 'config', 'cache', 'ids'];
/** The Postgres and Redis clients, their schema and key names. */
const SHARED_CLIENTS = ['db', 'redis'];

/** The modules that may import a Redis or Postgres client, and why each must. */
const CLIENT_ALLOW_LIST = [
  { files: ['**/*.repository.ts'], reason: 'repositories: the code that reads and writes Postgres and Redis' },
  { files: ['shared/redis/redis.ts'], reason: 'the Redis client factory (one node or a cluster)' },
  { files: ['shared/redis/coalesced-writes.ts'], reason: "the factory's connections: one socket write per event-loop turn" },
  { files: ['shared/redis/scripts.ts'], reason: 'the Lua script loader: defines the scripts as commands on a client' },
  { files: ['shared/db/database.ts'], reason: 'the Postgres client factory (the pg pool under Kysely)' },
  {
    files: ['shared/limits/limiter.ts', 'shared/limits/limited-read.ts', 'shared/limits/admission-leases.ts'],
    reason: 'the rate limiter, its script that also reads the profile, and its leases',
  },
  {
    files: ['dashboard/auth/sign-in-throttle.ts'],
    reason: "the dashboard's sign-in limiter: attempts over a sliding window in one script",
  },
  { files: ['shared/traffic/traffic-recorder.ts', 'shared/traffic/traffic-flush.ts'], reason: 'the traffic recorder and its flush' },
  {
    files: ['shared/usage/usage-flush.ts', 'shared/flush/snapshot-flush.ts'],
    reason: 'the usage flush, and the exactly-once snapshot it and the traffic flush share',
  },
  { files: ['shared/jobs/event-queues.ts'], reason: "the queue producer: the events queue's partitions" },
  { files: ['shared/health/readiness.ts'], reason: 'the readiness probes: PING on Redis, select 1 on Postgres' },
  {
    files: ['shared/test-data/test-data-reset.ts'],
    reason:
      "the test-data reset: removes a tenant's test data from Postgres, then its cached profiles and priors, fencing their generations",
  },
  { files: ['dashboard/http/session.ts'], reason: "the dashboard's session store (connect-redis) is handed the client" },
  {
    files: ['api/dependencies.ts', 'dashboard/dependencies.ts', 'worker/worker.ts', 'cli/connections.ts'],
    reason: "each process's wiring: opens its connections, queues and workers and hands them to the modules above",
  },
];

/** What only CLIENT_ALLOW_LIST may import: packages by name, modules by path, BullMQ by what speaks Redis. */
const CLIENTS = [
  { module: 'ioredis' },
  { module: 'connect-redis' },
  { module: 'pg' },
  { module: 'bullmq', names: ['Queue', 'Worker', 'QueueEvents', 'FlowProducer'] },
  { module: 'shared/redis/redis' },
];

const others = (name) => PROCESSES.filter((p) => p !== name);
const dirs = (names) => names.map((name) => `shared/${name}/**`);

/**
 * Where imports may not go: each zone forbids, to `files`, the modules of `forbid` (but those in
 * `allow`, and type-only imports from those in `typesFrom`) and the packages of `packages`.
 */
const ZONES = [
  ...PROCESSES.map((name) => ({
    files: [`${name}/**`],
    forbid: others(name).map((other) => `${other}/**`),
    message: `${name}/ must not depend on ${others(name).join('/, ')}/: each process imports only shared/ and itself`,
  })),
  {
    files: ['shared/**'],
    forbid: PROCESSES.map((name) => `${name}/**`),
    message: 'shared/ must not depend on a process (api/, worker/, dashboard/, cli/)',
  },
  {
    files: dirs(SHARED_FOUNDATIONS),
    forbid: ['shared/**'],
    allow: dirs(SHARED_FOUNDATIONS),
    message: `the foundations of shared/ (${SHARED_FOUNDATIONS.join(', ')}) import only each other`,
  },
  {
    files: dirs(SHARED_CLIENTS),
    forbid: ['shared/**'],
    allow: dirs([...SHARED_FOUNDATIONS, ...SHARED_CLIENTS]),
    message: `the clients of shared/ (${SHARED_CLIENTS.join(', ')}) import only each other and the foundations`,
  },
  {
    files: ['api/**'],
    except: ['api/http/**'],
    forbid: ['api/http/**'],
    message: "the API's lean HTTP layer is imported from api/http (its index), never from its files",
  },
  {
    files: [...PROCESSES.map((name) => `${name}/**`), 'shared/**'],
    except: CLIENT_ALLOW_LIST.flatMap((entry) => entry.files),
    clients: CLIENTS,
    message: 'Redis and Postgres clients are for the modules of CLIENT_ALLOW_LIST in eslint.config.mjs (repositories first)',
  },
  {
    files: ['dashboard/routes/**', 'dashboard/views/**'],
    forbid: ['**/*.repository', ...dirs(SHARED_CLIENTS)],
    packages: ['kysely'],
    typesFrom: ['**/*.repository'],
    message:
      "the dashboard's routes and views call its services (dashboard/services/), never a repository or the Postgres and Redis clients",
  },
];

/** A path glob (`**` any folders, `*` any name) as a regular expression over repository paths. */
function glob(pattern) {
  const body = pattern
    .split(/(\*\*\/|\*\*|\*)/)
    .map((part) =>
      part === '**/' ? '(?:.*/)?' : part === '**' ? '.*' : part === '*' ? '[^/]*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('');
  return new RegExp(`^${body}$`);
}

const matchesAny = (patterns, file) => (patterns ?? []).some((pattern) => glob(pattern).test(file));
const packageOf = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

const boundaries = {
  meta: { type: 'problem', schema: [], docs: { description: 'the layering rules of docs/ARCHITECTURE.md#layering' } },
  create(context) {
    const file = path.relative(context.cwd, context.filename).split(path.sep).join('/');
    const zones = ZONES.filter((zone) => matchesAny(zone.files, file) && !matchesAny(zone.except, file));
    if (zones.length === 0) return {};
    /** `names`: the value imports, or undefined when unknown (everything counts). */
    const check = (node, specifier, names) => {
      if (typeof specifier !== 'string') return;
      const relative = specifier.startsWith('.');
      const target = relative ? path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)) : specifier;
      for (const zone of zones) {
        const refused = zone.clients
          ? zone.clients.some(
              (client) =>
                (relative ? target === client.module : packageOf(target) === client.module) &&
                (!client.names || names === undefined || names.some((name) => client.names.includes(name))),
            )
          : relative
            ? matchesAny(zone.forbid, target) &&
              !matchesAny(zone.allow, target) &&
              !(names?.length === 0 && matchesAny(zone.typesFrom, target))
            : (zone.packages ?? []).includes(packageOf(target));
        if (refused) context.report({ node, message: `'${specifier}': ${zone.message}` });
      }
    };
    const valueNames = (node) => {
      if (node.importKind === 'type' || node.exportKind === 'type') return [];
      // No specifiers: export-all, or an import for its side effects (it runs the module).
      if (!node.specifiers || node.specifiers.length === 0) return undefined;
      return node.specifiers
        .filter((s) => s.importKind !== 'type' && s.exportKind !== 'type')
        .map((s) => (s.type === 'ImportSpecifier' ? (s.imported.name ?? s.imported.value) : s.local?.name));
    };
    return {
      ImportDeclaration: (node) =>
        check(node, node.source.value, node.specifiers.some((s) => s.type !== 'ImportSpecifier') ? undefined : valueNames(node)),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value, valueNames(node)),
      ExportAllDeclaration: (node) => check(node, node.source.value, node.exportKind === 'type' ? [] : undefined),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value, undefined),
      TSImportEqualsDeclaration: (node) =>
        node.moduleReference.type === 'TSExternalModuleReference' && check(node, node.moduleReference.expression.value, undefined),
      CallExpression: (node) =>
        node.callee.type === 'Identifier' &&
        node.callee.name === 'require' &&
        node.arguments[0]?.type === 'Literal' &&
        check(node, node.arguments[0].value, undefined),
    };
  },
};

export default tseslint.config(
  { ignores: ['dist/', 'sdk/dist/', 'node_modules/', 'coverage/', '.cos/', 'jest.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['**/*.ts'],
    plugins: { cos: { rules: { boundaries } } },
    rules: { 'cos/boundaries': 'error' },
  },
  {
    // The dashboard's browser scripts (uPlot is the bundled chart library's global).
    files: ['dashboard/assets/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: {
        document: 'readonly',
        navigator: 'readonly',
        window: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        uPlot: 'readonly',
      },
    },
  },
  {
    files: ['sdk/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^(?!\\./|node:)', message: "sdk/ stands alone: Node's built-ins only, no dependencies, no imports from the service" },
          ],
        },
      ],
    },
  },
);
