import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { withDatabase } from '../support/global-setup';

const root = path.join(__dirname, '../..');

/**
 * shared/db/schema.ts is generated from the migrated database by kysely-codegen
 * (.kysely-codegenrc.json): a migration whose table types were not regenerated fails here.
 */
it('matches the table types kysely-codegen generates from the migrated database', () => {
  const url = withDatabase(process.env.COS_TEST_ADMIN_URL!, process.env.COS_TEST_TEMPLATE_DB!);
  const run = spawnSync(path.join(root, 'node_modules/.bin/kysely-codegen'), ['--verify', '--url', url], {
    cwd: root,
    encoding: 'utf8',
  });
  expect({ status: run.status, output: `${run.stdout}${run.stderr}` }).toEqual({
    status: 0,
    output: expect.stringContaining('Generated types are up-to-date'),
  });
});
