import { Queue, type Job, type JobType } from 'bullmq';
import type { RedisKeys } from '../../shared/redis/key-names';
import { sql } from 'kysely';
import type { Db } from '../../shared/db/database';
import { EVENTS_QUEUE } from '../../shared/jobs/catalog';
import type { RedisClient } from '../../shared/redis/redis';

/**
 * What Postgres holds of a set of accepted outcomes: which were applied, which are missing, and
 * the users whose profile counts more outcomes than they have rows (applied twice).
 */
export async function outcomeLedger(db: Db, accepted: string[]) {
  const rows = accepted.length
    ? await db.selectFrom('outcomes').select(['request_id', 'user_id']).where('request_id', 'in', accepted).execute()
    : [];
  const applied = new Set(rows.map((row) => row.request_id));
  const users = [...new Set(rows.map((row) => row.user_id))];
  const perUser = users.length
    ? await sql<{ user_id: string; interactions: number; outcomes: number; versions: number }>`
        select p.user_id, p.interaction_count::int as interactions,
               (select count(*) from outcomes o where o.user_id = p.user_id and o.account_id = p.account_id)::int as outcomes,
               (select count(*) from profile_versions v
                 where v.user_id = p.user_id and v.account_id = p.account_id and v.cause = 'outcome')::int as versions
        from profiles p where p.user_id in (${sql.join(users)})`.execute(db)
    : { rows: [] };
  return {
    applied: applied.size,
    missing: accepted.filter((id) => !applied.has(id)),
    appliedTwice: perUser.rows.filter((u) => u.interactions !== u.outcomes || u.versions !== u.outcomes).map((u) => u.user_id),
  };
}

/** One events queue of a test's prefix, to read job states. */
export function eventsQueue(redis: RedisClient, queuePrefix: string): Queue {
  const queue = new Queue(EVENTS_QUEUE, { connection: redis, prefix: queuePrefix });
  queue.on('error', () => undefined);
  return queue;
}

/** Every events queue of a test's keys (one per partition), read as one. */
export function eventsQueues(redis: RedisClient, keys: RedisKeys) {
  const queues = keys.queuePrefixes.map((prefix) => eventsQueue(redis, prefix));
  return {
    queues,
    getJobs: async (types: JobType[]): Promise<Job[]> => (await Promise.all(queues.map((queue) => queue.getJobs(types)))).flat(),
    /** The job with this id, in whichever queue holds it. */
    getJob: async (jobId: string): Promise<Job | undefined> =>
      (await Promise.all(queues.map((queue) => queue.getJob(jobId)))).find((job) => job !== undefined),
    /** Jobs in these states, over every queue. */
    count: async (...types: JobType[]): Promise<number> =>
      (await Promise.all(queues.map((queue) => queue.getJobCountByTypes(...types)))).reduce((sum, n) => sum + n, 0),
    close: async () => {
      await Promise.all(queues.map((queue) => queue.close()));
    },
  };
}
export type EventsQueues = ReturnType<typeof eventsQueues>;

/** True once no event job waits, runs or waits for a retry (in any of the queues given). */
export async function eventsIdle(queue: Queue | { queues: Queue[] }): Promise<boolean> {
  const queues = queue instanceof Queue ? [queue] : queue.queues;
  const counts = await Promise.all(queues.map((partition) => partition.getJobCounts('wait', 'active', 'delayed', 'prioritized')));
  return counts.every((partition) => Object.values(partition).every((n) => n === 0));
}
