import { sql, type Kysely } from 'kysely';

/**
 * Dashboard traffic (docs/adr/0012-traffic-recording.md): additive counters per key and minute,
 * the same per key and hour, the ledger of flushed Redis snapshots, and unusual patterns.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['traffic_minute', 'traffic_hour']) {
    // metric: 'req' (label `<endpoint>:<status>`), 'lat' (label: latency bucket), 'geo' (label: country).
    await db.schema
      .createTable(table)
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('environment', 'text', (c) => c.notNull().check(sql`environment in ('test', 'live')`))
      .addColumn('at', 'timestamptz', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('metric', 'text', (c) => c.notNull().check(sql`metric in ('req', 'lat', 'geo')`))
      .addColumn('label', 'text', (c) => c.notNull())
      .addColumn('count', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint(`${table}_pk`, ['account_id', 'environment', 'at', 'key_id', 'metric', 'label'])
      .execute();
    // Retention deletes by time alone.
    await db.schema.createIndex(`${table}_at_idx`).on(table).column('at').execute();
  }

  await db.schema
    .createTable('traffic_flushes')
    .addColumn('flush_id', 'text', (c) => c.primaryKey())
    .addColumn('rows', 'integer', (c) => c.notNull())
    .addColumn('flushed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('traffic_anomalies')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('environment', 'text', (c) => c.notNull().check(sql`environment in ('test', 'live')`))
    .addColumn('id', 'bigserial', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('rule', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('numbers', 'jsonb', (c) => c.notNull())
    .addColumn('first_seen', 'timestamptz', (c) => c.notNull())
    .addColumn('last_seen', 'timestamptz', (c) => c.notNull())
    .addColumn('acknowledged_at', 'timestamptz')
    .addColumn('acknowledged_by', 'text')
    .addPrimaryKeyConstraint('traffic_anomalies_pk', ['account_id', 'environment', 'id'])
    .execute();
  await db.schema
    .createIndex('traffic_anomalies_identity_idx')
    .on('traffic_anomalies')
    .columns(['account_id', 'environment', 'key_id', 'rule', 'subject', 'last_seen'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
