import { randomUUID } from 'node:crypto';
import type { Result } from 'ioredis';
import { sql } from 'kysely';
import type { Db, DbOrTx } from '../db/database';
import type { RedisKeys } from '../redis/key-names';
import type { RedisClient } from '../redis/redis';
import { defineScripts } from '../redis/scripts';

/**
 * Moves counter hashes from Redis into Postgres exactly once (docs/adr/0006-usage-flush.md), for
 * any counters kept as one hash per period (a day of usage, a minute of traffic):
 * 1. snapshot: each period's hash is atomically renamed to a snapshot and the snapshot id
 *    recorded (shared/redis/lua/snapshotPeriod-4.lua); new counts start a fresh hash;
 * 2. for each recorded snapshot, one transaction inserts its id into the ledger and, only when
 *    that insert is new, writes its counts;
 * 3. after the commit, the snapshot is deleted.
 * A crash before 2 leaves the snapshot for the next run; a crash between 2 and 3 makes the next
 * run find the id in the ledger and only delete the snapshot. Nothing is lost or counted twice.
 */
declare module 'ioredis' {
  interface RedisCommander<Context> {
    cosSnapshotPeriod(
      periodKey: string,
      snapshotKey: string,
      snapshotsKey: string,
      periodsKey: string,
      snapshotId: string,
      period: string,
    ): Result<number, Context>;
  }
}

/** Where one kind of counters lives in Redis and which ledger table records its flushes. */
export interface SnapshotSource {
  /** Set of the periods that may have counts. */
  periods: string;
  /** The live hash of a period. */
  hash: (period: string) => string;
  /** A snapshot's hash, and the set of snapshots not yet deleted. */
  snapshot: (snapshotId: string) => string;
  snapshots: string;
  isPeriod: (period: string) => boolean;
  ledger: 'usage_flushes' | 'traffic_flushes';
}

export interface FlushHooks {
  /** Test seam: called after the Postgres commit of a snapshot, before it is deleted. */
  afterCommit?: (snapshotId: string) => Promise<void> | void;
  /** Test seam: called after the snapshots are taken, before any is written. */
  afterSnapshot?: () => Promise<void> | void;
}

export interface FlushResult {
  snapshots: number;
  rows: number;
}

/** Writes a snapshot's counts inside the ledger's transaction; returns the rows written. */
export type SnapshotWriter = (tx: DbOrTx, period: string, counts: Record<string, string>) => Promise<number>;

/** Where a flush of usage or traffic reads its counts (Redis, by these key names) and writes them (Postgres). */
export interface FlushStores {
  redis: RedisClient;
  keys: RedisKeys;
  db: Db;
}

/** One flush: from the sources in Redis, by `write`, into Postgres. */
export interface SnapshotFlush {
  redis: RedisClient;
  /** One source, or several flushed as one (a source per shard on a Redis Cluster). */
  sources: SnapshotSource | readonly SnapshotSource[];
  db: Db;
  write: SnapshotWriter;
  hooks?: FlushHooks;
}

const UUID_SUFFIX = 37; // ':' and a UUID

/**
 * Flushes one source, or several flushed as one (a source per shard on a Redis Cluster, each
 * in a slot of its own): all are snapshotted before any is written.
 */
export async function flushSnapshots({ redis, sources, db, write, hooks = {} }: SnapshotFlush): Promise<FlushResult> {
  defineScripts(redis, ['cosSnapshotPeriod']);
  const all = Array.isArray(sources) ? sources : [sources as SnapshotSource];
  for (const source of all) {
    for (const period of await redis.smembers(source.periods)) {
      if (!source.isPeriod(period)) continue;
      const snapshotId = `${period}:${randomUUID()}`;
      await redis.cosSnapshotPeriod(source.hash(period), source.snapshot(snapshotId), source.snapshots, source.periods, snapshotId, period);
    }
  }
  await hooks.afterSnapshot?.();

  const result: FlushResult = { snapshots: 0, rows: 0 };
  const writing = { redis, db, write, hooks };
  for (const source of all) {
    const flushed = await writeSnapshots(writing, source);
    result.snapshots += flushed.snapshots;
    result.rows += flushed.rows;
  }
  return result;
}

/** Writes each recorded snapshot of a source once, then deletes it. */
async function writeSnapshots(
  { redis, db, write, hooks }: Required<Omit<SnapshotFlush, 'sources'>>,
  source: SnapshotSource,
): Promise<FlushResult> {
  const result: FlushResult = { snapshots: 0, rows: 0 };
  for (const snapshotId of await redis.smembers(source.snapshots)) {
    const counts = await redis.hgetall(source.snapshot(snapshotId));
    const period = snapshotId.slice(0, -UUID_SUFFIX);
    const flushed = await db.transaction().execute(async (tx) => {
      const claimed = await sql<{ flush_id: string }>`
        insert into ${sql.table(source.ledger)} (flush_id, rows) values (${snapshotId}, 0)
        on conflict (flush_id) do nothing returning flush_id`.execute(tx);
      if (claimed.rows.length === 0) return -1;
      const rows = await write(tx, period, counts);
      if (rows > 0) await sql`update ${sql.table(source.ledger)} set rows = ${rows} where flush_id = ${snapshotId}`.execute(tx);
      return rows;
    });
    await hooks.afterCommit?.(snapshotId);
    await redis.multi().del(source.snapshot(snapshotId)).srem(source.snapshots, snapshotId).exec();
    if (flushed >= 0) {
      result.snapshots += 1;
      result.rows += flushed;
    }
  }
  return result;
}

/** Owners of key ids, for counts recorded by key id alone; ids unknown to Postgres are absent. */
export async function keyOwners(db: DbOrTx, keyIds: string[]): Promise<Map<string, { accountId: string; environment: 'test' | 'live' }>> {
  if (keyIds.length === 0) return new Map();
  const rows = await db.selectFrom('api_keys').select(['id', 'account_id', 'environment']).where('id', 'in', keyIds).execute();
  return new Map(rows.map((row) => [row.id, { accountId: row.account_id, environment: row.environment }]));
}
