import type { DbOrTx } from '../db/database';

/** A signed-in dashboard session as recorded beside its Redis data (`id`: the SHA-256 of the session id). */
export interface SessionRecord {
  id: string;
  userId: string;
  createdAt: string;
  lastSeenAt: string;
  client: string | null;
  userAgent: string | null;
}

type SessionRow = {
  id: string;
  user_id: string;
  created_at: Date;
  last_seen_at: Date;
  client: string | null;
  user_agent: string | null;
};

const toRecord = (row: SessionRow): SessionRecord => ({
  id: row.id,
  userId: row.user_id,
  createdAt: new Date(row.created_at).toISOString(),
  lastSeenAt: new Date(row.last_seen_at).toISOString(),
  client: row.client,
  userAgent: row.user_agent,
});

export async function insertSession(
  db: DbOrTx,
  session: { id: string; userId: string; at: Date; client: string | null; userAgent: string | null },
): Promise<void> {
  await db
    .insertInto('dashboard_sessions')
    .values({
      id: session.id,
      user_id: session.userId,
      created_at: session.at,
      last_seen_at: session.at,
      client: session.client,
      user_agent: session.userAgent,
    })
    .execute();
}

export async function findSession(db: DbOrTx, id: string): Promise<SessionRecord | null> {
  const row = await db.selectFrom('dashboard_sessions').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toRecord(row) : null;
}

export async function touchSession(db: DbOrTx, id: string, at: Date): Promise<void> {
  await db.updateTable('dashboard_sessions').set({ last_seen_at: at }).where('id', '=', id).execute();
}

/** The user's sessions seen since `seenAfter` and begun since `createdAfter`, newest first. */
export async function listSessions(db: DbOrTx, userId: string, live: { seenAfter: Date; createdAfter: Date }): Promise<SessionRecord[]> {
  const rows = await db
    .selectFrom('dashboard_sessions')
    .selectAll()
    .where('user_id', '=', userId)
    .where('last_seen_at', '>', live.seenAfter)
    .where('created_at', '>', live.createdAfter)
    .orderBy('created_at', 'desc')
    .execute();
  return rows.map(toRecord);
}

/** Deletes the user's sessions but `keepId` (a session's key; none kept when undefined); returns how many ended. */
export async function deleteSessions(db: DbOrTx, { userId, keepId }: { userId: string; keepId?: string }): Promise<number> {
  let query = db.deleteFrom('dashboard_sessions').where('user_id', '=', userId);
  if (keepId !== undefined) query = query.where('id', '<>', keepId);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function deleteSession(db: DbOrTx, id: string): Promise<void> {
  await db.deleteFrom('dashboard_sessions').where('id', '=', id).execute();
}

/** Forgets the user's sessions that ended by themselves (idle or past their lifetime). */
export async function deleteLapsedSessions(db: DbOrTx, userId: string, live: { seenAfter: Date; createdAfter: Date }): Promise<void> {
  await db
    .deleteFrom('dashboard_sessions')
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('last_seen_at', '<=', live.seenAfter), eb('created_at', '<=', live.createdAfter)]))
    .execute();
}
