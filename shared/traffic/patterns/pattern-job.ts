import { sql } from 'kysely';
import type { Db } from '../../db/database';
import { recordFinding } from './anomaly.repository';
import { loadKeyActivity } from './pattern-data';
import { evaluateKey } from './rules';
import { PATTERN_THRESHOLDS, type PatternThresholds } from './thresholds';

const PATTERN_LOCK = sql`hashtextextended('cos:traffic-patterns', 0)`;

export interface PatternRun {
  keys: number;
  findings: number;
  created: number;
}

/**
 * The scheduled unusual-pattern job: evaluates every rule on every key with recent history at
 * `now` and records the findings. One run at a time across workers (an advisory lock, taken in
 * the run's transaction; a run that finds it taken does nothing).
 */
export async function detectPatterns(db: Db, now: number, thresholds: PatternThresholds = PATTERN_THRESHOLDS): Promise<PatternRun | null> {
  return db.transaction().execute(async (tx) => {
    const locked = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(${PATTERN_LOCK}) as locked`.execute(tx);
    if (!locked.rows[0]?.locked) return null;
    const keys = await loadKeyActivity(tx, now, thresholds);
    const run: PatternRun = { keys: keys.length, findings: 0, created: 0 };
    for (const key of keys) {
      for (const finding of evaluateKey(key.activity, thresholds)) {
        run.findings += 1;
        if (await recordFinding(tx, key, finding, now, thresholds.continuationMs)) run.created += 1;
      }
    }
    return run;
  });
}
