import { sql, type Kysely } from 'kysely';

/** Accounts, keys, profiles with history, decisions, outcomes and erasures. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('plan', 'text', (c) => c.notNull().check(sql`plan in ('starter', 'pro', 'enterprise')`))
    .addColumn('restricted', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('accounts_updated_at_idx').on('accounts').column('updated_at').execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('environment', 'text', (c) => c.notNull().check(sql`environment in ('test', 'live')`))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'bytea', (c) => c.notNull().unique())
    .addColumn('last4', 'text', (c) => c.notNull())
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('rate_limit_rps', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('deleted_at', 'timestamptz')
    .addColumn('expires_at', 'timestamptz')
    .addColumn('replaced_by', 'text')
    .execute();
  await db.schema.createIndex('api_keys_account_idx').on('api_keys').columns(['account_id', 'created_at']).execute();
  await db.schema.createIndex('api_keys_updated_at_idx').on('api_keys').column('updated_at').execute();

  const tenantColumns = (table: string) =>
    db.schema
      .createTable(table)
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('environment', 'text', (c) => c.notNull().check(sql`environment in ('test', 'live')`))
      .addColumn('user_id', 'text', (c) => c.notNull());

  await tenantColumns('profiles')
    .addColumn('generation', 'text', (c) => c.notNull())
    .addColumn('state', 'jsonb', (c) => c.notNull())
    .addColumn('pins', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('profile_version', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('interaction_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('profiles_pk', ['account_id', 'environment', 'user_id'])
    .execute();

  await tenantColumns('profile_versions')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('profile_version', 'integer', (c) => c.notNull())
    .addColumn('cause', 'text', (c) => c.notNull().check(sql`cause in ('outcome', 'manual', 'reset')`))
    .addColumn('changed', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('profile_versions_unique', ['account_id', 'environment', 'user_id', 'profile_version'])
    .execute();

  await tenantColumns('decisions')
    .addColumn('request_id', 'text', (c) => c.primaryKey())
    .addColumn('chosen', 'jsonb', (c) => c.notNull())
    .addColumn('probabilities', 'jsonb', (c) => c.notNull())
    .addColumn('context', 'jsonb', (c) => c.notNull())
    .addColumn('explored', 'jsonb', (c) => c.notNull())
    .addColumn('confidence', 'double precision', (c) => c.notNull())
    .addColumn('issued_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('decisions_user_idx')
    .on('decisions')
    .columns(['account_id', 'environment', 'user_id', 'issued_at'])
    .execute();
  await db.schema.createIndex('decisions_env_issued_idx').on('decisions').columns(['environment', 'issued_at']).execute();

  await tenantColumns('outcomes')
    .addColumn('request_id', 'text', (c) => c.primaryKey())
    .addColumn('fields', 'jsonb', (c) => c.notNull())
    .addColumn('reward', 'double precision', (c) => c.notNull())
    .addColumn('received_at', 'timestamptz', (c) => c.notNull())
    .addColumn('applied_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('outcomes_user_idx').on('outcomes').columns(['account_id', 'environment', 'user_id']).execute();

  // Erasure records keep a keyed hash of the userId (shared/ids/user-hash.ts), never the id.
  await db.schema
    .createTable('erasures')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('environment', 'text', (c) => c.notNull().check(sql`environment in ('test', 'live')`))
    .addColumn('user_hash', 'text', (c) => c.notNull())
    .addColumn('erased_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('erasures_pk', ['account_id', 'environment', 'user_hash'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
