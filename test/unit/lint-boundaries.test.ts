import { spawnSync } from 'node:child_process';
import path from 'node:path';

/**
 * The layering rules of eslint.config.mjs, run by ESLint's own API on small samples under made-up
 * paths: each refusal fires, and what the rules allow passes. ESLint loads its ES-module config
 * with a dynamic import, which jest's module sandbox refuses, so the samples are linted by one
 * Node process of their own.
 */
const ROOT = path.join(__dirname, '../..');

interface Sample {
  file: string;
  code: string;
}

const LINT = `
import { ESLint } from 'eslint';
let input = '';
for await (const chunk of process.stdin) input += chunk;
const eslint = new ESLint({ cwd: process.cwd() });
const results = [];
for (const { file, code } of JSON.parse(input)) {
  const [result] = await eslint.lintText(code, { filePath: file });
  results.push(result.messages.filter((m) => m.ruleId === 'cos/boundaries' || m.ruleId === 'no-restricted-imports').map((m) => m.message));
}
process.stdout.write(JSON.stringify(results));
`;

/** The layering messages of each sample, in order. */
function lintAll(samples: Sample[]): string[][] {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', LINT], {
    cwd: ROOT,
    input: JSON.stringify(samples),
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout);
}

/**
 * Every test's samples, linted by one process (starting ESLint takes a second or more): each
 * group registers its samples when the file loads and reads its messages once all are linted.
 */
const registered: Sample[] = [];
let linted: string[][] | undefined;
function lint(samples: Sample[]): () => string[][] {
  const start = registered.push(...samples) - samples.length;
  return () => (linted ??= lintAll(registered)).slice(start, start + samples.length);
}

const PROCESSES = ['api', 'worker', 'dashboard', 'cli'];
const sample = (file: string, ...lines: string[]): Sample => ({ file, code: `${lines.join('\n')}\n` });

const crossing = PROCESSES.flatMap((from) =>
  PROCESSES.filter((to) => to !== from).map((to) => ({
    from,
    to,
    sample: sample(`${from}/services/x.ts`, `import { y } from '../../${to}/main';`),
  })),
).concat(PROCESSES.map((to) => ({ from: 'shared', to, sample: sample('shared/jobs/x.ts', `import { y } from '../../${to}/main';`) })));
const crossingResults = lint(crossing.map((c) => c.sample));

const anyForm = lint([
  sample('api/x.ts', "import type { Handlers } from '../worker/registry';"),
  sample('dashboard/x.ts', "export { runCli } from '../cli/main';"),
  sample('cli/x.ts', "export * from '../dashboard/app';"),
  sample('worker/x.ts', "const app = require('../api/app');"),
  sample('shared/x/y.ts', "export const load = () => import('../../api/app');"),
]);

const withinProcess = lint([
  sample('api/routes/x.ts', "import { y } from '../services/profile.service';", "import { z } from '../../shared/domain/arms';"),
  sample('cli/x.ts', "import { y } from './commands';", "import { z } from '../shared/config/config';"),
  sample('worker/phases/x.ts', "import { y } from '../event-batcher';", "import { z } from '../../shared/jobs/catalog';"),
]);

const sharedTiers = lint([
  sample('shared/domain/x.ts', "import { y } from '../db/database';"),
  sample('shared/domain/engine/x.ts', "import { y } from '../../redis/key-names';"),
  sample('shared/config/x.ts', "import { y } from '../limits/plans';"),
  sample('shared/db/x.ts', "import { y } from '../traffic/traffic-queries';"),
  sample('shared/redis/x.ts', "import { y } from '../profile/profile';"),
  // Allowed: foundations among themselves, clients on foundations, the rest on anything.
  sample('shared/domain/engine/x.ts', "import { y } from '../arms';", "import { z } from '../../util/compare';"),
  sample('shared/db/x.ts', "import { y } from '../domain/environment';", "import { z } from '../redis/key-names';"),
  sample('shared/traffic/x.ts', "import { y } from '../db/database';", "import { z } from '../usage/usage-flush';"),
]);

const clientsRefused = lint([
  sample('api/services/x.ts', "import type { Result } from 'ioredis';"),
  sample('api/services/x.ts', "import type { RedisClient } from '../../shared/redis/redis';"),
  sample('shared/traffic/x.ts', "import { createRedis } from '../redis/redis';"),
  sample('dashboard/routes/x.ts', "import RedisStore from 'connect-redis';"),
  sample('shared/evaluation/x.ts', "import { Pool } from 'pg';"),
  sample('worker/x.ts', "import { Queue } from 'bullmq';"),
  sample('cli/commands.ts', "import { Worker as W } from 'bullmq';"),
]);

const clientsAllowed = lint([
  sample(
    'shared/profile/outcome-claims.repository.ts',
    "import type { Result } from 'ioredis';",
    "import type { RedisClient } from '../redis/redis';",
  ),
  sample('worker/phases/events.repository.ts', "import { Redis } from 'ioredis';"),
  sample('shared/redis/scripts.ts', "import type { Redis } from 'ioredis';"),
  sample('shared/db/database.ts', "import { Pool } from 'pg';"),
  sample('shared/limits/limiter.ts', "import type { Result } from 'ioredis';"),
  sample('api/dependencies.ts', "import { createRedis } from '../shared/redis/redis';"),
  sample('worker/worker.ts', "import { Queue, Worker } from 'bullmq';"),
  sample('worker/registry.ts', "import { DelayedError, UnrecoverableError, type Job, type Queue } from 'bullmq';"),
  sample('test/integration/x.test.ts', "import { Redis } from 'ioredis';", "import { Client } from 'pg';"),
  sample('scripts/x.ts', "import { Redis } from 'ioredis';", "import { runCli } from '../cli/main';"),
]);

const leanLayer = lint([
  sample('api/routes/x.ts', "import { pipeline } from '../http/pipeline';"),
  sample('api/app.ts', "import { frontDoor } from './http/front-door';"),
  sample('api/services/x.ts', "import type { ExactRoutes } from '../http/front-door';"),
  // Allowed: the index, and the layer's own files among themselves.
  sample('api/routes/x.ts', "import { pipeline, sendJson } from '../http';"),
  sample('api/http/front-door.ts', "import { pipeline } from './pipeline';"),
]);

const dashboardLayers = lint([
  // Refused: a value, or everything, of a repository; the Postgres and Redis modules of shared/; Kysely.
  sample('dashboard/routes/x.routes.ts', "import { listKeys } from '../../shared/credentials/key.repository';"),
  sample('dashboard/routes/x.routes.ts', "import { findKeyById, type ApiKeyRecord } from '../../shared/credentials/key.repository';"),
  sample('dashboard/views/x.view.ts', "import * as audit from '../../shared/audit/audit.repository';"),
  sample('dashboard/routes/x.routes.ts', "export const load = () => import('../../shared/traffic/patterns/anomaly.repository');"),
  sample('dashboard/routes/x.routes.ts', "import type { Db } from '../../shared/db/database';"),
  sample('dashboard/views/x.view.ts', "import type { RedisKeys } from '../../shared/redis/key-names';"),
  sample('dashboard/routes/x.routes.ts', "import { sql } from 'kysely';"),
  sample('dashboard/views/x.view.ts', "import '../../shared/credentials/key.repository';"),
  // Allowed: the services, a repository's records by type, pure modules; the services themselves on repositories.
  sample(
    'dashboard/routes/x.routes.ts',
    "import { AUDIT_PAGE_SIZE, type AuditLog } from '../services/audit-log.service';",
    "import type { AccountKeys } from '../services/account-keys.service';",
  ),
  sample(
    'dashboard/views/x.view.ts',
    "import type { ApiKeyRecord } from '../../shared/credentials/key.repository';",
    "import { keyStatus } from '../../shared/credentials/key-status';",
  ),
  sample('dashboard/routes/x.routes.ts', "import { type AuditEntry } from '../../shared/audit/audit.repository';"),
  sample(
    'dashboard/services/x.service.ts',
    "import { listKeys } from '../../shared/credentials/key.repository';",
    "import type { Db } from '../../shared/db/database';",
  ),
]);

const sdk = lint([
  sample('sdk/src/x.ts', "import { y } from '../../shared/domain/arms';"),
  sample('sdk/src/x.ts', "import { z } from 'zod';"),
  sample('sdk/src/x.ts', "import { y } from './errors';", "import { createHash } from 'node:crypto';"),
]);

describe('lint: the layering rules', () => {
  it('refuses imports between processes in every direction, and from shared/ into any of them', () => {
    const results = crossingResults();
    crossing.forEach(({ from, to }, i) => {
      expect(results[i]).toHaveLength(1);
      expect(results[i]![0]).toContain(`'../../${to}/main': ${from}/ must not depend on`);
    });
  });

  it('refuses them however they are written: type imports, export-from, require() and import()', () => {
    for (const messages of anyForm()) expect(messages).toEqual([expect.stringMatching(/must not depend on/)]);
  });

  it('lets a process import shared/ and itself', () => {
    expect(withinProcess()).toEqual([[], [], []]);
  });

  it("keeps shared/'s foundations and clients from importing what is built on them", () => {
    const results = sharedTiers();
    expect(results.slice(0, 3)).toEqual(Array(3).fill([expect.stringMatching(/the foundations of shared\/ .* import only each other/)]));
    expect(results.slice(3, 5)).toEqual(
      Array(2).fill([expect.stringMatching(/the clients of shared\/ .* import only each other and the foundations/)]),
    );
    expect(results.slice(5)).toEqual([[], [], []]);
  });

  it('refuses the Redis and Postgres clients outside the allow-list', () => {
    for (const messages of clientsRefused()) {
      expect(messages).toEqual([expect.stringMatching(/Redis and Postgres clients are for the modules of CLIENT_ALLOW_LIST/)]);
    }
  });

  it('lets the allow-list import them, and everyone import BullMQ types and errors', () => {
    expect(clientsAllowed()).toEqual(Array(10).fill([]));
  });

  it("reaches the API's lean HTTP layer only through its index", () => {
    const results = leanLayer();
    expect(results.slice(0, 3)).toEqual(Array(3).fill([expect.stringMatching(/lean HTTP layer is imported from api\/http \(its index\)/)]));
    expect(results.slice(3)).toEqual([[], []]);
  });

  it("keeps the dashboard's routes and views off repositories and the clients, and lets them call services", () => {
    const results = dashboardLayers();
    expect(results.slice(0, 8)).toEqual(
      Array(8).fill([expect.stringMatching(/the dashboard's routes and views call its services \(dashboard\/services\/\)/)]),
    );
    expect(results.slice(8)).toEqual([[], [], [], []]);
  });

  it("keeps the SDK to its own files and Node's built-ins", () => {
    const results = sdk();
    expect(results.slice(0, 2)).toEqual(Array(2).fill([expect.stringMatching(/sdk\/ stands alone/)]));
    expect(results[2]).toEqual([]);
  });
});
