import { sql, type Kysely } from 'kysely';

/**
 * The audit log names keys by name and last 4 characters, as the keys page does: each entry
 * keeps the name and last 4 of its key as they were when it was written, so it still names a
 * key whose row later goes, and a rotation's entry names the key that replaced the old one.
 * Entries written before this are filled in from the keys that still exist.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table dashboard_audit
    add column key_name text,
    add column key_last4 text,
    add column new_key_id text,
    add column new_key_name text,
    add column new_key_last4 text`.execute(db);
  await sql`update dashboard_audit a set key_name = k.name, key_last4 = k.last4,
      new_key_id = case when a.action = 'key.rotate' then k.replaced_by end
    from api_keys k where k.id = a.key_id`.execute(db);
  await sql`update dashboard_audit a set new_key_name = k.name, new_key_last4 = k.last4
    from api_keys k where k.id = a.new_key_id`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
