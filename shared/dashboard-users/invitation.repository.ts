import { sql } from 'kysely';
import type { DbOrTx } from '../db/database';
import { randomBase62 } from '../util/random-base62';
import type { Role } from './user.repository';

/** An invitation as an owner sees it on the team page, or its link's page reads it. */
export interface Invitation {
  id: string;
  accountId: string;
  email: string;
  role: Role;
  invitedBy: string;
  createdAt: string;
  expiresAt: string;
  acceptedAt: string | null;
  revokedAt: string | null;
}

type InvitationRow = {
  id: string;
  account_id: string;
  email: string;
  role: Role;
  invited_by: string;
  created_at: Date;
  expires_at: Date;
  accepted_at: Date | null;
  revoked_at: Date | null;
};

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

const toInvitation = (row: InvitationRow): Invitation => ({
  id: row.id,
  accountId: row.account_id,
  email: row.email,
  role: row.role,
  invitedBy: row.invited_by,
  createdAt: iso(row.created_at)!,
  expiresAt: iso(row.expires_at)!,
  acceptedAt: iso(row.accepted_at),
  revokedAt: iso(row.revoked_at),
});

const COLUMNS = ['id', 'account_id', 'email', 'role', 'invited_by', 'created_at', 'expires_at', 'accepted_at', 'revoked_at'] as const;

/**
 * A new open invitation, or null when the account already has an open one for the email. An
 * open one that has expired is closed (revoked) first: it could never be used, and must not
 * stand in the way of a new one.
 */
export async function createInvitation(
  db: DbOrTx,
  invitation: { accountId: string; email: string; role: Role; tokenHash: string; invitedBy: string; expiresAt: Date },
  now: Date,
): Promise<Invitation | null> {
  await db
    .updateTable('dashboard_invitations')
    .set({ revoked_at: sql`now()` })
    .where('account_id', '=', invitation.accountId)
    .where('email', '=', invitation.email)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '<=', now)
    .execute();
  const row = await db
    .insertInto('dashboard_invitations')
    .values({
      id: `inv_${randomBase62(16)}`,
      account_id: invitation.accountId,
      email: invitation.email,
      role: invitation.role,
      token_hash: invitation.tokenHash,
      invited_by: invitation.invitedBy,
      expires_at: invitation.expiresAt,
    })
    .onConflict((oc) => oc.columns(['account_id', 'email']).where('accepted_at', 'is', null).where('revoked_at', 'is', null).doNothing())
    .returning(COLUMNS)
    .executeTakeFirst();
  return row ? toInvitation(row) : null;
}

/** The account's open invitations (expired ones too, marked so by their date), oldest first. */
export async function listOpenInvitations(db: DbOrTx, accountId: string): Promise<Invitation[]> {
  const rows = await db
    .selectFrom('dashboard_invitations')
    .select(COLUMNS)
    .where('account_id', '=', accountId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .orderBy('created_at')
    .execute();
  return rows.map(toInvitation);
}

/** The invitation of a link, locked for the rest of the transaction so it is accepted at most once. */
export async function lockInvitationByToken(tx: DbOrTx, tokenHash: string): Promise<Invitation | null> {
  const row = await tx
    .selectFrom('dashboard_invitations')
    .select(COLUMNS)
    .where('token_hash', '=', tokenHash)
    .forUpdate()
    .executeTakeFirst();
  return row ? toInvitation(row) : null;
}

export async function findInvitationByToken(db: DbOrTx, tokenHash: string): Promise<Invitation | null> {
  const row = await db.selectFrom('dashboard_invitations').select(COLUMNS).where('token_hash', '=', tokenHash).executeTakeFirst();
  return row ? toInvitation(row) : null;
}

export async function markInvitationAccepted(tx: DbOrTx, id: string): Promise<void> {
  await tx
    .updateTable('dashboard_invitations')
    .set({ accepted_at: sql`now()` })
    .where('id', '=', id)
    .execute();
}

/** An invitation as its account names it: one object, so the two ids cannot swap. */
export interface InvitationRef {
  accountId: string;
  invitationId: string;
}

/** Revokes the account's open invitation `invitationId`; returns it, or null when there is no such open one. */
export async function revokeInvitation(db: DbOrTx, { accountId, invitationId }: InvitationRef): Promise<Invitation | null> {
  const row = await db
    .updateTable('dashboard_invitations')
    .set({ revoked_at: sql`now()` })
    .where('id', '=', invitationId)
    .where('account_id', '=', accountId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .returning(COLUMNS)
    .executeTakeFirst();
  return row ? toInvitation(row) : null;
}
