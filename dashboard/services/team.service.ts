import { createHash, randomBytes } from 'node:crypto';
import { findAccount } from '../../shared/accounts/account.repository';
import { recordAudit } from '../../shared/audit/audit.repository';
import {
  createInvitation,
  findInvitationByToken,
  listOpenInvitations,
  lockInvitationByToken,
  markInvitationAccepted,
  revokeInvitation,
  type Invitation,
} from '../../shared/dashboard-users/invitation.repository';
import { hashPassword } from '../../shared/dashboard-users/password';
import {
  countOwners,
  createUser,
  deleteUserById,
  findAccountUser,
  findUserForSignIn,
  lastSignIns,
  listUsers,
  lockAccountMembers,
  setRole,
  type DashboardUser,
  type Role,
} from '../../shared/dashboard-users/user.repository';
import type { Db } from '../../shared/db/database';
import type { DashboardActor } from './audit-log.service';
import type { UserSessions } from './user-sessions.service';

/** The roles a member can have, for the team page's forms. */
export { ROLES, roleSchema } from '../../shared/dashboard-users/user.repository';

/** How long an invitation's link can be used. */
export const INVITATION_LIFETIME_MS = 7 * 24 * 3_600_000;

/** 32 random bytes, base64url: what an invitation link carries. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
const tokenHash = (token: string) => createHash('sha256').update(token).digest('base64url');

/** A member of the account as the team page lists them. */
export interface Member {
  user: DashboardUser;
  /** The last sign-in the audit log knows of, or null. */
  lastSignIn: string | null;
}

/** Why an invitation link is no longer good: said on the page the link opens. */
export type LinkState = 'unknown' | 'used' | 'revoked' | 'expired';

export type InviteResult = { outcome: 'invited'; invitation: Invitation; token: string } | { outcome: 'already-user' | 'already-invited' };
export type MemberChange = { outcome: 'done'; user: DashboardUser } | { outcome: 'not-found' | 'last-owner' };
export type AcceptResult = { outcome: 'accepted'; user: DashboardUser } | { outcome: LinkState | 'email-taken' };

/**
 * An account's team: its users, invitations of new ones by a one-time link, and owners' changes
 * of roles and removals. Every change is audited; one that changes what a member may do ends all
 * of that member's sessions, so it holds from their next request.
 */
export class Team {
  constructor(
    private readonly db: Db,
    private readonly sessions: UserSessions,
    private readonly clock: () => number = Date.now,
  ) {}

  async members(accountId: string): Promise<Member[]> {
    const [users, signIns] = await Promise.all([listUsers(this.db, accountId), lastSignIns(this.db, accountId)]);
    return users.map((user) => ({ user, lastSignIn: signIns.get(user.email) ?? null }));
  }

  /** One member of the account, or null for a user who is not one. */
  async member(ref: { accountId: string; userId: string }): Promise<Member | null> {
    return (await this.members(ref.accountId)).find((member) => member.user.id === ref.userId) ?? null;
  }

  invitations(accountId: string): Promise<Invitation[]> {
    return listOpenInvitations(this.db, accountId);
  }

  /** A new invitation and its link's token (shown once: only its hash is kept). */
  async invite(actor: DashboardActor, email: string, role: Role): Promise<InviteResult> {
    // Emails are unique across accounts: a user anywhere could never accept.
    if (await findUserForSignIn(this.db, email)) return { outcome: 'already-user' };
    const token = randomBytes(32).toString('base64url');
    const invitation = await this.db.transaction().execute(async (tx) => {
      const created = await createInvitation(
        tx,
        {
          accountId: actor.user.accountId,
          email,
          role,
          tokenHash: tokenHash(token),
          invitedBy: actor.user.email,
          expiresAt: new Date(this.clock() + INVITATION_LIFETIME_MS),
        },
        new Date(this.clock()),
      );
      if (created) await this.audit(tx, actor, 'team.invite', email);
      return created;
    });
    return invitation ? { outcome: 'invited', invitation, token } : { outcome: 'already-invited' };
  }

  async revoke(actor: DashboardActor, invitationId: string): Promise<Invitation | null> {
    return this.db.transaction().execute(async (tx) => {
      const revoked = await revokeInvitation(tx, { accountId: actor.user.accountId, invitationId });
      if (revoked) await this.audit(tx, actor, 'team.invite-revoke', revoked.email);
      return revoked;
    });
  }

  /** The invitation a link names while it can be accepted, or why it cannot. */
  async open(token: string): Promise<{ outcome: 'open'; invitation: Invitation; accountName: string } | { outcome: LinkState }> {
    const invitation = TOKEN_PATTERN.test(token) ? await findInvitationByToken(this.db, tokenHash(token)) : null;
    const state = this.stateOf(invitation);
    if (state !== 'open') return { outcome: state };
    const account = await findAccount(this.db, invitation!.accountId);
    return account ? { outcome: 'open', invitation: invitation!, accountName: account.name } : { outcome: 'unknown' };
  }

  /**
   * Makes the invitee a user of the account with the invited role and `password`; the
   * invitation, locked meanwhile, is used up in the same transaction, so a link works once.
   */
  async accept(token: string, password: string, country: DashboardActor['country']): Promise<AcceptResult> {
    if (!TOKEN_PATTERN.test(token)) return { outcome: 'unknown' };
    // Hashed before the transaction: argon2 takes a while, and no lock is held meanwhile.
    const passwordHash = await hashPassword(password);
    return this.db.transaction().execute(async (tx): Promise<AcceptResult> => {
      const invitation = await lockInvitationByToken(tx, tokenHash(token));
      const state = this.stateOf(invitation);
      if (state !== 'open') return { outcome: state };
      const user = await createUser(tx, {
        accountId: invitation!.accountId,
        email: invitation!.email,
        role: invitation!.role,
        passwordHash,
      });
      if (!user) return { outcome: 'email-taken' };
      await markInvitationAccepted(tx, invitation!.id);
      await this.audit(tx, { user, country }, 'team.invite-accept', null);
      return { outcome: 'accepted', user };
    });
  }

  /** Gives the account's user `userId` the role `role`; the account's last owner keeps theirs. */
  async changeRole(actor: DashboardActor, userId: string, role: Role): Promise<MemberChange> {
    const result = await this.db.transaction().execute(async (tx): Promise<MemberChange> => {
      await lockAccountMembers(tx, actor.user.accountId);
      const user = await findAccountUser(tx, { accountId: actor.user.accountId, userId });
      if (!user) return { outcome: 'not-found' };
      if (user.role === role) return { outcome: 'done', user };
      if (user.role === 'owner' && (await countOwners(tx, user.accountId)) <= 1) return { outcome: 'last-owner' };
      await setRole(tx, user.id, role);
      await this.audit(tx, actor, role === 'owner' ? 'team.role-owner' : 'team.role-viewer', user.email);
      return { outcome: 'done', user: { ...user, role } };
    });
    // Their sessions were signed in under the old role: they sign in again under the new one.
    if (result.outcome === 'done') await this.sessions.endAll(result.user.id);
    return result;
  }

  /** Deletes the account's user `userId` (their sessions go with them); never the last owner. */
  async remove(actor: DashboardActor, userId: string): Promise<MemberChange> {
    const result = await this.db.transaction().execute(async (tx): Promise<MemberChange> => {
      await lockAccountMembers(tx, actor.user.accountId);
      const user = await findAccountUser(tx, { accountId: actor.user.accountId, userId });
      if (!user) return { outcome: 'not-found' };
      if (user.role === 'owner' && (await countOwners(tx, user.accountId)) <= 1) return { outcome: 'last-owner' };
      await deleteUserById(tx, user.id);
      await this.audit(tx, actor, 'team.remove', user.email);
      return { outcome: 'done', user };
    });
    // Their session rows go with the user; ended again after the commit, should one have begun meanwhile.
    if (result.outcome === 'done') await this.sessions.endAll(result.user.id);
    return result;
  }

  private stateOf(invitation: Invitation | null): LinkState | 'open' {
    if (!invitation) return 'unknown';
    if (invitation.acceptedAt) return 'used';
    if (invitation.revokedAt) return 'revoked';
    if (Date.parse(invitation.expiresAt) <= this.clock()) return 'expired';
    return 'open';
  }

  private audit(
    tx: Parameters<typeof recordAudit>[0],
    actor: DashboardActor,
    action: 'team.invite' | 'team.invite-revoke' | 'team.invite-accept' | 'team.role-owner' | 'team.role-viewer' | 'team.remove',
    subject: string | null,
  ): Promise<void> {
    return recordAudit(tx, {
      accountId: actor.user.accountId,
      actor: actor.user.email,
      action,
      subject: subject ?? undefined,
      country: actor.country,
    });
  }
}
