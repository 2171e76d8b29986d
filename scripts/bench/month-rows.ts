import { sql } from 'kysely';
import type { Db } from '../../shared/db/database';
import { ensurePartitions } from '../../shared/db/partitions';
import type { Tenant } from '../../shared/domain/environment';

/**
 * A month of history for the bench's tenant, put in before the timed rounds: `rows` decisions,
 * each with its outcome, issued over the month so far to `users`, under request ids as random as
 * the API's. A busy tenant's month holds millions of rows, where a fresh database's tables hold
 * only what the bench posts; the cost of an insert depends on where its key falls in an index of
 * that size (docs/adr/0013-monthly-partitions.md). Request ids are `req_` and 128 hex digits,
 * about as long as the API's and never one of them. Run before the tenant's first decision: every
 * decision of the tenant gets its outcome.
 */
export async function fillMonth(db: Db, tenant: Tenant, users: string[], rows: number): Promise<void> {
  if (rows === 0) return;
  await ensurePartitions(db, Date.now());
  const month = sql`date_trunc('month', now())`;
  await sql`
    insert into decisions (account_id, environment, user_id, request_id, chosen, probabilities, context, explored, confidence, issued_at)
    select ${tenant.accountId}, ${tenant.environment}, (${users}::text[])[1 + i % ${users.length}],
      'req_' || md5(i::text) || md5((-i)::text) || md5((i * 7)::text) || md5((i * 13)::text),
      '{"framing":"purpose","style":"direct","complexityHandling":"chunked","encouragement":"minimal"}',
      '{"framing":0.8,"style":0.25,"complexityHandling":0.33,"encouragement":0.33}', '{"complexity":"medium"}', '[]', 0.5,
      ${month} + (now() - ${month}) * (i::float8 / ${rows + 1})
    from generate_series(1, ${rows}) as i`.execute(db);
  await sql`
    insert into outcomes (account_id, environment, user_id, request_id, issued_at, fields, reward, received_at, applied_at)
    select account_id, environment, user_id, request_id, issued_at, '{"started":true}', 0.5, issued_at, issued_at
    from decisions where account_id = ${tenant.accountId} and environment = ${tenant.environment}`.execute(db);
  await sql`analyze decisions, outcomes`.execute(db);
}
