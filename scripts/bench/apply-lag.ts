import { sql } from 'kysely';
import type { Db } from '../../shared/db/database';
import { drive } from './drive';
import { openLoop } from './load-client';
import { summarize, type RunSummary } from './load-stats';
import { log } from './processes';
import { lagSummary, type LagSummary } from './worker-figures';
import { requestIdOf } from './worker-backlog';

/**
 * How long an outcome waits between its acceptance and its application while the workers keep
 * up: requestIds are issued (their decisions applied), then one outcome per requestId is posted
 * open loop at `rate` for `seconds` (bench:load's open-loop client: each due at its time whatever
 * came before) with the workers running. An outcome's lag is read from its row: from
 * `received_at`, the API's clock when it took the post (the 202 follows once the job is in
 * Redis), to `applied_at`, the start of the worker's transaction that wrote it (its commit is a
 * little later).
 */

export interface ApplyLag {
  /** Outcomes posted per second (open loop). */
  rate: number;
  seconds: number;
  /** Seconds posted first and left out of the lag: the workers' first outcomes (compiling the outcome path, loading priors). */
  warmupSeconds: number;
  /** The posts' answers: 202s, their p50 and p99 from each one's due time. */
  posts: RunSummary;
  /** Outcomes accepted whose row was found, and their lag. */
  lag: LagSummary;
  /** Accepted outcomes without a row once the queues were empty (the exactly-once check of this phase). */
  missing: number;
}

export async function applyLagPhase(o: {
  db: Db;
  port: number;
  headers: Record<string, string>;
  /** Requests in flight while the requestIds are issued. */
  connections: number;
  contextCall: (i: number) => { path: string; body: unknown };
  drained: (what: string) => Promise<unknown>;
  rate: number;
  seconds: number;
  warmupSeconds: number;
}): Promise<ApplyLag> {
  const warmup = Math.round(o.rate * o.warmupSeconds);
  const total = Math.max(1, warmup + Math.round(o.rate * o.seconds));
  log(
    `apply lag: issuing ${total} requestIds, then posting their outcomes at ${o.rate}/s for ${o.warmupSeconds} s of warm-up and ${o.seconds} s measured…`,
  );
  const ids: string[] = [];
  await drive(o.port, o.headers, total, o.connections, o.contextCall, (_i, status, body) => {
    if (status === 200) ids.push(requestIdOf(body));
  });
  if (ids.length < total) throw new Error(`apply lag: only ${ids.length} of ${total} requestIds were issued`);
  await o.drained('the decisions of the apply-lag requestIds to be applied');

  let next = 0;
  const body = () => {
    const i = next++;
    return JSON.stringify({ requestId: ids[i], started: true, completed: i % 3 !== 0, satisfaction: (i % 5) / 4 });
  };
  const run = await openLoop({
    port: o.port,
    path: '/v1/outcome',
    headers: o.headers,
    body,
    rate: o.rate,
    seconds: o.warmupSeconds + o.seconds,
  });
  await o.drained('the apply-lag outcomes to be applied');

  const posted = ids.slice(0, next);
  const { rows } = await sql<{ requestId: string; lagMs: number }>`
    select request_id as "requestId", (extract(epoch from (applied_at - received_at)) * 1000)::float8 as "lagMs"
    from outcomes where request_id = any(${posted}::text[])`.execute(o.db);
  const measured = new Set(posted.slice(warmup));
  return {
    rate: o.rate,
    seconds: o.seconds,
    warmupSeconds: o.warmupSeconds,
    posts: summarize(run),
    lag: lagSummary(rows.filter((row) => measured.has(row.requestId)).map((row) => row.lagMs)),
    missing: run.ok - rows.length,
  };
}
