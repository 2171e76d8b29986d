import type { Queue } from 'bullmq';
import type { WorkerConfig } from '../shared/config/config';
import { JOB_NAMES, JOBS, type JobName, type QueueName, type Schedule } from '../shared/jobs/catalog';

/** The catalog's scheduled jobs, each with its schedule. */
export function scheduledJobs(): Array<{ name: JobName; schedule: Schedule }> {
  return JOB_NAMES.flatMap((name) => {
    const spec = JOBS[name];
    return 'scheduler' in spec ? [{ name, schedule: spec.scheduler satisfies Schedule }] : [];
  });
}

/**
 * Registers (or updates) the schedule of every scheduled catalog job on its queue: a job
 * declared with a `scheduler` in the catalog runs without any change here.
 */
export async function registerSchedules(
  queues: Record<Exclude<QueueName, 'events'>, Pick<Queue, 'upsertJobScheduler'>>,
  config: Pick<WorkerConfig, 'USAGE_FLUSH_INTERVAL' | 'WEBHOOK_RELAY_INTERVAL'>,
): Promise<void> {
  for (const { name, schedule } of scheduledJobs()) {
    const queue = JOBS[name].queue;
    if (queue === 'events') throw new Error(`job ${name} cannot be scheduled on the partitioned events queue`);
    const repeat = 'every' in schedule ? { every: config[schedule.every] } : { pattern: schedule.pattern, tz: schedule.tz };
    await queues[queue].upsertJobScheduler(schedule.id, repeat, { name, data: {}, opts: JOBS[name].options });
  }
}
