import { sql, type Kysely } from 'kysely';

/**
 * Invitations of teammates to an account's dashboard, by a one-time link.
 *
 * - token_hash: SHA-256 of the link's random token; the token itself is shown once and never kept.
 * - accepted_at / revoked_at: set once, when the link is used or an owner withdraws it; an
 *   invitation with neither, before expires_at, is pending.
 * - At most one invitation per account and email is open (neither accepted nor revoked): a
 *   second one would leave two links for the same person.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}

const STATEMENTS = [
  `create table dashboard_invitations (
    id text primary key,
    account_id text not null references accounts (id) on delete cascade,
    email text not null check (email = lower(email)),
    role text not null check (role in ('owner', 'viewer')),
    token_hash text not null unique,
    invited_by text not null,
    created_at timestamptz not null default now(),
    expires_at timestamptz not null,
    accepted_at timestamptz,
    revoked_at timestamptz
  )`,
  `create unique index dashboard_invitations_open_idx on dashboard_invitations (account_id, email)
    where accepted_at is null and revoked_at is null`,
];
