import { sql } from 'kysely';
import type { Db } from '../../shared/db/database';
import { migrateToLatest } from '../../shared/db/migrator';
import { createEngine, emptyPrior, readEngineState } from '../../shared/domain/engine/engine';
import { lockProfiles, updateProfiles } from '../../shared/profile/profile.repository';
import { databaseMigratedTo } from '../support/migrated-to';

/** Learner states stored as jsonb before the state became json come through whole. */
let db: Db;
beforeAll(async () => {
  db = await databaseMigratedTo('202611291000_create_webhooks');
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
  // Compressed with lz4 where this Postgres has it, else as before.
  const lz4 = await sql`create temporary table lz4_probe (a text compression lz4)`.execute(db).then(
    () => true,
    () => false,
  );
  const { rows: method } = await sql<{ method: string }>`
    select attcompression::text as method from pg_attribute where attrelid = 'profiles'::regclass and attname = 'state'`.execute(db);
  expect(method).toEqual([{ method: lz4 ? 'l' : '' }]);
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
