import type { Selectable } from 'kysely';
import type { DbOrTx } from '../../db/database';
import type { TrafficAnomalies } from '../../db/schema';
import type { Environment } from '../../domain/environment';
import { AppError } from '../../errors/app-error';
import type { KeyRef } from './pattern-data';
import type { Finding, PatternRule } from './rules';
import { recordEvent } from '../../webhooks/outbox.repository';

export interface Anomaly {
  id: number;
  accountId: string;
  environment: Environment;
  keyId: string;
  rule: PatternRule;
  subject: string;
  /** Plain-language reason with its numbers, as of the last time it was seen. */
  reason: string;
  numbers: Record<string, number | string>;
  firstSeen: string;
  lastSeen: string;
  acknowledgedAt: string | null;
  acknowledgedBy: string | null;
}

type AnomalyRow = Selectable<TrafficAnomalies>;

const toAnomaly = (row: AnomalyRow): Anomaly => ({
  id: Number(row.id),
  accountId: row.account_id,
  environment: row.environment,
  keyId: row.key_id,
  rule: row.rule as PatternRule,
  subject: row.subject,
  reason: row.reason,
  numbers: row.numbers,
  firstSeen: new Date(row.first_seen).toISOString(),
  lastSeen: new Date(row.last_seen).toISOString(),
  acknowledgedAt: row.acknowledged_at ? new Date(row.acknowledged_at).toISOString() : null,
  acknowledgedBy: row.acknowledged_by,
});

/**
 * Records a finding at `now`: the latest anomaly of the same key, rule and subject continues
 * (last seen, reason and numbers move) when it is unacknowledged or was last seen within
 * `continuationMs`; otherwise a new anomaly starts, and its `pattern.opened` webhook event is
 * written in the same transaction. Returns whether a new one was created.
 */
export async function recordFinding(db: DbOrTx, key: KeyRef, finding: Finding, now: number, continuationMs: number): Promise<boolean> {
  const at = new Date(now);
  const latest = await db
    .selectFrom('traffic_anomalies')
    .select(['id', 'acknowledged_at', 'last_seen'])
    .where('account_id', '=', key.accountId)
    .where('environment', '=', key.environment)
    .where('key_id', '=', key.keyId)
    .where('rule', '=', finding.rule)
    .where('subject', '=', finding.subject)
    .orderBy('last_seen', 'desc')
    .limit(1)
    .executeTakeFirst();
  const numbers = JSON.stringify(finding.numbers);
  if (latest && (!latest.acknowledged_at || now - new Date(latest.last_seen).getTime() <= continuationMs)) {
    await db
      .updateTable('traffic_anomalies')
      .set({ last_seen: at, reason: finding.reason, numbers })
      .where('account_id', '=', key.accountId)
      .where('environment', '=', key.environment)
      .where('id', '=', latest.id)
      .execute();
    return false;
  }
  const inserted = await db
    .insertInto('traffic_anomalies')
    .values({
      account_id: key.accountId,
      environment: key.environment,
      key_id: key.keyId,
      rule: finding.rule,
      subject: finding.subject,
      reason: finding.reason,
      numbers,
      first_seen: at,
      last_seen: at,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const named = await db.selectFrom('api_keys').select(['name', 'last4']).where('id', '=', key.keyId).executeTakeFirstOrThrow();
  await recordEvent(db, {
    accountId: key.accountId,
    environment: key.environment,
    type: 'pattern.opened',
    data: {
      patternId: Number(inserted.id),
      rule: finding.rule,
      key: { id: key.keyId, name: named.name, last4: named.last4 },
      subject: finding.subject,
      reason: finding.reason,
      numbers: finding.numbers,
      firstSeen: at.toISOString(),
    },
    occurredAt: at,
  });
  return true;
}

export interface AnomalyQuery {
  accountId: string;
  environment?: Environment;
  keyId?: string;
  /** Include acknowledged anomalies (default: only open ones). */
  includeAcknowledged?: boolean;
  /** Most recent first; default 100. */
  limit?: number;
}

/** An account's anomalies, most recently seen first. */
export async function listAnomalies(db: DbOrTx, query: AnomalyQuery): Promise<Anomaly[]> {
  let select = db.selectFrom('traffic_anomalies').selectAll().where('account_id', '=', query.accountId);
  if (query.environment) select = select.where('environment', '=', query.environment);
  if (query.keyId) select = select.where('key_id', '=', query.keyId);
  if (!query.includeAcknowledged) select = select.where('acknowledged_at', 'is', null);
  const rows = await select
    .orderBy('last_seen', 'desc')
    .orderBy('id', 'desc')
    .limit(query.limit ?? 100)
    .execute();
  return rows.map((row) => toAnomaly(row));
}

/** How many of an account's anomalies are not acknowledged yet. */
export async function countOpenAnomalies(db: DbOrTx, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('traffic_anomalies')
    .select((eb) => eb.fn.countAll<string>().as('open'))
    .where('account_id', '=', accountId)
    .where('acknowledged_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.open);
}

/** Who acknowledges: a dashboard user of the account. */
export interface Acknowledger {
  accountId: string;
  role: 'owner' | 'viewer';
  /** Recorded as acknowledged_by (an email or user id). */
  name: string;
}

/**
 * Acknowledges an anomaly of the user's own account. Viewers may not (403 FORBIDDEN); an id of
 * another account is NOT_FOUND, as if it did not exist. Acknowledging twice keeps the first.
 */
export async function acknowledgeAnomaly(db: DbOrTx, by: Acknowledger, anomalyId: number, now: number): Promise<Anomaly> {
  if (by.role !== 'owner') throw new AppError('FORBIDDEN', 'Only an owner can acknowledge an unusual pattern');
  const row = await db
    .updateTable('traffic_anomalies')
    .set({ acknowledged_at: new Date(now), acknowledged_by: by.name })
    .where('account_id', '=', by.accountId)
    .where('id', '=', anomalyId)
    .where('acknowledged_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
  if (row) return toAnomaly(row);
  const existing = await db
    .selectFrom('traffic_anomalies')
    .selectAll()
    .where('account_id', '=', by.accountId)
    .where('id', '=', anomalyId)
    .executeTakeFirst();
  if (!existing) throw new AppError('NOT_FOUND', `No unusual pattern ${anomalyId} in this account`);
  return toAnomaly(existing);
}
