import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { createTestEnv, type TestEnv } from '../support/test-env';

const root = path.join(__dirname, '../..');

let env: TestEnv;
beforeAll(async () => {
  // A copy of the template, never the template itself: CREATE DATABASE … TEMPLATE is refused
  // while anyone is connected to the template, and the other test files copy it in parallel.
  env = await createTestEnv();
});
afterAll(() => env.close());

/**
 * shared/db/schema.ts is generated from the migrated database by kysely-codegen
 * (.kysely-codegenrc.json): a migration whose table types were not regenerated fails here.
 */
it('matches the table types kysely-codegen generates from the migrated database', () => {
  const run = spawnSync(path.join(root, 'node_modules/.bin/kysely-codegen'), ['--verify', '--url', env.databaseUrl], {
    cwd: root,
    encoding: 'utf8',
  });
  expect({ status: run.status, output: `${run.stdout}${run.stderr}` }).toEqual({
    status: 0,
    output: expect.stringContaining('Generated types are up-to-date'),
  });
});
