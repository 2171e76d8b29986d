import type { Queue } from 'bullmq';
import { JOBS, JOB_NAMES } from '../../shared/jobs/catalog';
import { registerSchedules, scheduledJobs } from '../../worker/schedules';

describe('the catalog schedules', () => {
  it('lists every job declared with a scheduler, and no other', () => {
    const declared = JOB_NAMES.filter((name) => 'scheduler' in JOBS[name]);
    expect(scheduledJobs().map((job) => job.name)).toEqual(declared);
    expect(declared).toEqual(
      expect.arrayContaining(['usageFlush', 'trafficFlush', 'trafficRetention', 'trafficPatterns', 'partitionUpkeep', 'testDataReset']),
    );
  });

  it('registers each on its queue with its interval or cron pattern and its options', async () => {
    const upserts: unknown[][] = [];
    const queue = (name: string) =>
      ({ upsertJobScheduler: async (...args: unknown[]) => void upserts.push([name, ...args]) }) as unknown as Queue;
    await registerSchedules(
      { maintenance: queue('maintenance'), webhooks: queue('webhooks') },
      { USAGE_FLUSH_INTERVAL: 10_000, WEBHOOK_RELAY_INTERVAL: 1000 },
    );
    expect(upserts).toContainEqual([
      'maintenance',
      'usage-flush',
      { every: 10_000 },
      { name: 'usageFlush', data: {}, opts: JOBS.usageFlush.options },
    ]);
    expect(upserts).toContainEqual([
      'webhooks',
      'webhook-relay',
      { every: 1000 },
      { name: 'webhookRelay', data: {}, opts: JOBS.webhookRelay.options },
    ]);
    expect(upserts).toContainEqual([
      'maintenance',
      'test-data-reset',
      { pattern: '0 0 1 * *', tz: 'UTC' },
      { name: 'testDataReset', data: {}, opts: JOBS.testDataReset.options },
    ]);
    expect(upserts).toHaveLength(scheduledJobs().length);
  });
});
