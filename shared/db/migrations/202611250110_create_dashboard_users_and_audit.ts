import { sql, type Kysely } from 'kysely';

/**
 * People who sign in to the dashboard (each belongs to one account, as owner or viewer) and the
 * audit log of what they did. The audit log keeps the client's country code, never its address,
 * and the actor's email as it was, so entries outlive the user who made them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('dashboard_users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) =>
      c
        .notNull()
        .unique()
        .check(sql`email = lower(email)`),
    )
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('owner', 'viewer')`))
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('dashboard_users_account_idx').on('dashboard_users').column('account_id').execute();

  await db.schema
    .createTable('dashboard_audit')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text')
    .addColumn('environment', 'text', (c) => c.check(sql`environment in ('test', 'live')`))
    .addColumn('country', 'text', (c) => c.check(sql`country ~ '^[A-Z]{2}$'`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('dashboard_audit_account_idx').on('dashboard_audit').columns(['account_id', 'id desc']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('dashboard_audit').execute();
  await db.schema.dropTable('dashboard_users').execute();
}
