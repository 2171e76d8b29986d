import { sql, type Kysely } from 'kysely';

/**
 * Two-factor sign-in, the account's requirement of it, and a record of each signed-in session.
 *
 * - dashboard_users.totp_secret: the TOTP secret, encrypted (the dashboard holds the key), set
 *   once enrolment is confirmed; totp_last_step: the last time-step accepted, so a code is taken once.
 * - dashboard_recovery_codes: SHA-256 of each recovery code (random, high entropy); used_at set on use.
 * - accounts.require_two_factor: an owner's choice that every user of the account uses 2FA.
 * - dashboard_sessions: one row per signed-in session (by the SHA-256 of its id), so a user can
 *   list theirs and end them, and a session outlives neither its row nor its absolute lifetime.
 * - dashboard_audit.subject: the user an action was done to, when not the actor (an operator's reset).
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}

const STATEMENTS = [
  `alter table dashboard_users
    add column totp_secret text,
    add column totp_enabled_at timestamptz,
    add column totp_last_step bigint`,
  `create table dashboard_recovery_codes (
    user_id text not null references dashboard_users (id) on delete cascade,
    code_hash text not null,
    used_at timestamptz,
    primary key (user_id, code_hash)
  )`,
  `alter table accounts add column require_two_factor boolean not null default false`,
  `create table dashboard_sessions (
    id text primary key,
    user_id text not null references dashboard_users (id) on delete cascade,
    created_at timestamptz not null,
    last_seen_at timestamptz not null,
    client text,
    user_agent text
  )`,
  `create index dashboard_sessions_user_idx on dashboard_sessions (user_id)`,
  `alter table dashboard_audit add column subject text`,
];
