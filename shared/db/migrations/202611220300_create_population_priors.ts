import { sql, type Kysely } from 'kysely';

/**
 * Population priors of the learning engine: one row per (account, environment) holding the
 * aggregate evidence new and sparse users start from. `version` comes from a sequence, so it
 * only ever grows — also across a test-data reset that deletes the row — and Redis copies can
 * be written "if newer" without ever moving backwards.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create sequence population_version_seq`.execute(db);
  await db.schema
    .createTable('population_priors')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('environment', 'text', (c) => c.notNull().check(sql`environment in ('test', 'live')`))
    .addColumn('prior', 'jsonb', (c) => c.notNull())
    .addColumn('version', 'bigint', (c) => c.notNull().defaultTo(sql`nextval('population_version_seq')`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('population_priors_pk', ['account_id', 'environment'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('population_priors').execute();
  await sql`drop sequence population_version_seq`.execute(db);
}
