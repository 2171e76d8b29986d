import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { FileMigrationProvider, Migrator, sql } from 'kysely';
import { Client } from 'pg';
import { createDb, DB_ROLES, type Db } from '../../shared/db/database';
import { migrateToLatest } from '../../shared/db/migrator';
import { createEngine, emptyPrior, readEngineState } from '../../shared/domain/engine/engine';
import { lockProfiles, updateProfiles } from '../../shared/profile/profile.repository';
import { withDatabase } from '../support/global-setup';

/** Learner states stored as jsonb before the state became json come through whole. */
let db: Db;
beforeAll(async () => {
  const name = `cos_test_state_json_${randomBytes(5).toString('hex')}`;
  const admin = new Client({ connectionString: process.env.COS_TEST_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  db = createDb(withDatabase(process.env.COS_TEST_ADMIN_URL!, name), { ...DB_ROLES.tool, poolSize: 2 });
  const migrator = new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder: path.join(__dirname, '../../shared/db/migrations') }),
  });
  expect((await migrator.migrateTo('202611291000_create_webhooks')).error).toBeUndefined();
});
afterAll(() => db.destroy());

it('keeps every stored state as it was, and stores the next one as sent', async () => {
  const engine = createEngine();
  const prior = emptyPrior();
  const feedback = {
    context: { taskComplexity: 'high' as const, taskType: 'report' },
    choice: { framing: 'purpose', style: 'warm', complexityHandling: 'whole', encouragement: 'minimal' } as const,
    reward: 0.8125,
    started: true,
  };
  const learned = engine.update(engine.initialState(prior), feedback, prior);
  await sql`insert into profiles (account_id, environment, user_id, generation, state, profile_version, interaction_count)
    values ('acct_a', 'live', 'u1', 'g1', ${JSON.stringify(learned)}::jsonb, 1, 1)`.execute(db);
  expect((await migrateToLatest(db)).error).toBeUndefined();

  const { rows } = await sql<{ type: string }>`select pg_typeof(state)::text as type from profiles`.execute(db);
  expect(rows).toEqual([{ type: 'json' }]);
  const tenant = { accountId: 'acct_a', environment: 'live' as const };
  const unreadable: string[] = [];
  const stored = (await lockProfiles(db, tenant, ['u1'], (_, issue) => unreadable.push(issue))).get('u1')!;
  expect(unreadable).toEqual([]);
  expect(stored.state).toEqual(readEngineState(JSON.parse(JSON.stringify(learned))));

  const next = { ...stored, state: engine.update(stored.state, feedback, prior), version: 2, interactionCount: 2 };
  await updateProfiles(db, tenant, [next]);
  const { rows: text } = await sql<{ state: string }>`select state::text as state from profiles`.execute(db);
  expect(text).toEqual([{ state: JSON.stringify(next.state) }]);
});
