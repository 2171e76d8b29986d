import { createHash } from 'node:crypto';
import {
  deleteLapsedSessions,
  deleteSession,
  deleteSessions,
  findSession,
  insertSession,
  listSessions,
  touchSession,
  type SessionRecord,
} from '../../shared/dashboard-users/sessions.repository';
import type { Db } from '../../shared/db/database';

/** Last seen is written at most this often: not a Postgres write for every page. */
const TOUCH_EVERY_MS = 60_000;

export interface SessionLimits {
  /** DASHBOARD_SESSION_IDLE: unused this long, a session ends (Redis's TTL does it). */
  idleMs: number;
  /** DASHBOARD_SESSION_MAX_AGE: this long after sign-in, a session ends however active. */
  maxAgeMs: number;
}

/** A signed-in session and whose it is: one object, so the session's id and the user's cannot swap. */
export interface SessionRef {
  sessionId: string;
  userId: string;
}

/** A live session as its user sees it in the list. */
export interface SessionSummary extends SessionRecord {
  current: boolean;
}

/** What a session is known by in Postgres: a hash of its id, so the table holds nothing a cookie could be made from. */
export const sessionKeyOf = (sessionId: string): string => createHash('sha256').update(sessionId).digest('base64url');

/** "Firefox on Linux": enough to tell one's sessions apart, without keeping the whole User-Agent. */
export function userAgentSummary(userAgent: string | undefined): string | null {
  if (!userAgent) return null;
  const browser =
    [
      [/Edg\//, 'Edge'],
      [/OPR\/|Opera/, 'Opera'],
      [/Firefox\//, 'Firefox'],
      [/Chrome\/|CriOS\//, 'Chrome'],
      [/Safari\//, 'Safari'],
      [/^curl\//, 'curl'],
    ].find(([pattern]) => (pattern as RegExp).test(userAgent))?.[1] ?? 'another browser';
  const system =
    [
      [/Android/, 'Android'],
      [/iPhone|iPad|iPod/, 'iOS'],
      [/Windows/, 'Windows'],
      [/Mac OS X|Macintosh/, 'macOS'],
      [/CrOS/, 'ChromeOS'],
      [/Linux/, 'Linux'],
    ].find(([pattern]) => (pattern as RegExp).test(userAgent))?.[1] ?? null;
  return system ? `${browser} on ${system}` : String(browser);
}

/**
 * Every signed-in session of a user, recorded in Postgres beside its data in Redis: listed on
 * the sessions page, and ended together when the password or two-factor sign-in changes (or
 * whatever later needs it, as a role change). A session whose record is gone, or older than
 * the absolute lifetime, is refused on its next request (requireViewer).
 */
export class UserSessions {
  constructor(
    private readonly db: Db,
    readonly limits: SessionLimits,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Records a session just signed in, and forgets the user's sessions that lapsed meanwhile. */
  async begin({ sessionId, userId }: SessionRef, client: { address: string | undefined; userAgent: string | undefined }): Promise<void> {
    const now = this.clock();
    await deleteLapsedSessions(this.db, userId, this.liveSince(now));
    await insertSession(this.db, {
      id: sessionKeyOf(sessionId),
      userId,
      at: new Date(now),
      client: client.address?.slice(0, 64) ?? null,
      userAgent: userAgentSummary(client.userAgent),
    });
  }

  /**
   * How long until the session must end at the latest (ms), or null when it has ended: its record
   * was removed, is another user's, or the absolute lifetime is over (the record goes then too).
   */
  async check({ sessionId, userId }: SessionRef): Promise<{ remainingMs: number } | null> {
    const key = sessionKeyOf(sessionId);
    const record = await findSession(this.db, key);
    if (!record || record.userId !== userId) return null;
    const now = this.clock();
    const endsAt = Date.parse(record.createdAt) + this.limits.maxAgeMs;
    if (now >= endsAt) {
      await deleteSession(this.db, key);
      return null;
    }
    if (now - Date.parse(record.lastSeenAt) >= TOUCH_EVERY_MS) await touchSession(this.db, key, new Date(now));
    return { remainingMs: endsAt - now };
  }

  /** The live sessions of the `current` session's user, newest first, `current` marked. */
  async list(current: SessionRef): Promise<SessionSummary[]> {
    const currentKey = sessionKeyOf(current.sessionId);
    const sessions = await listSessions(this.db, current.userId, this.liveSince(this.clock()));
    return sessions.map((session) => ({ ...session, current: session.id === currentKey }));
  }

  /** Ends every session of `keep`'s user but `keep`; returns how many ended. */
  endOthers(keep: SessionRef): Promise<number> {
    return deleteSessions(this.db, { userId: keep.userId, keepId: sessionKeyOf(keep.sessionId) });
  }

  /** Ends every session of the user; returns how many ended. */
  endAll(userId: string): Promise<number> {
    return deleteSessions(this.db, { userId });
  }

  /** Ends one session (sign-out). */
  end(sessionId: string): Promise<void> {
    return deleteSession(this.db, sessionKeyOf(sessionId));
  }

  private liveSince(now: number): { seenAfter: Date; createdAfter: Date } {
    // Last seen is written once a minute: a session seen within the idle period plus that is live.
    return { seenAfter: new Date(now - this.limits.idleMs - TOUCH_EVERY_MS), createdAfter: new Date(now - this.limits.maxAgeMs) };
  }
}
