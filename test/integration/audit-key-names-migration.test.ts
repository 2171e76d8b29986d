import { sql } from 'kysely';
import type { Db } from '../../shared/db/database';
import { BASELINE_MIGRATION, migrateToLatest } from '../../shared/db/migrator';
import { databaseMigratedTo } from '../support/migrated-to';

/** Entries written before the audit log stored key names get them from the keys that still exist. */
let db: Db;
beforeAll(async () => {
  db = await databaseMigratedTo(BASELINE_MIGRATION);
});
afterAll(() => db.destroy());

it('fills in the key names of earlier entries, and the new key of a rotation', async () => {
  await sql`insert into accounts (id, name, plan) values ('acct_a', 'a', 'starter')`.execute(db);
  await sql`insert into api_keys (id, account_id, environment, name, key_hash, last4, scopes, replaced_by) values
    ('key_old', 'acct_a', 'test', 'checkout', '\\x01', 'AAAA', '{context}', 'key_new'),
    ('key_new', 'acct_a', 'test', 'checkout', '\\x02', 'BBBB', '{context}', null)`.execute(db);
  await sql`insert into dashboard_audit (account_id, actor, action, key_id, environment) values
    ('acct_a', 'o@a.test', 'key.create', 'key_old', 'test'),
    ('acct_a', 'o@a.test', 'key.rotate', 'key_old', 'test'),
    ('acct_a', 'o@a.test', 'key.delete', 'key_gone', 'test'),
    ('acct_a', 'o@a.test', 'session.sign-in', null, null)`.execute(db);
  expect((await migrateToLatest(db)).error).toBeUndefined();
  const rows = await db
    .selectFrom('dashboard_audit')
    .select(['action', 'key_name', 'key_last4', 'new_key_id', 'new_key_name', 'new_key_last4'])
    .orderBy('id')
    .execute();
  expect(rows).toEqual([
    { action: 'key.create', key_name: 'checkout', key_last4: 'AAAA', new_key_id: null, new_key_name: null, new_key_last4: null },
    {
      action: 'key.rotate',
      key_name: 'checkout',
      key_last4: 'AAAA',
      new_key_id: 'key_new',
      new_key_name: 'checkout',
      new_key_last4: 'BBBB',
    },
    { action: 'key.delete', key_name: null, key_last4: null, new_key_id: null, new_key_name: null, new_key_last4: null },
    { action: 'session.sign-in', key_name: null, key_last4: null, new_key_id: null, new_key_name: null, new_key_last4: null },
  ]);
});
