import { UnrecoverableError, type Job } from 'bullmq';
import { JOBS, JOB_NAMES, type JobName } from '../shared/jobs/catalog';

export type Handler = (data: unknown, job: Job) => Promise<string>;

/** Maps every catalog job to exactly one handler; the worker refuses to boot otherwise. */
export function buildRegistry(handlers: Record<JobName, Handler>): Map<JobName, Handler> {
  const registry = new Map<JobName, Handler>();
  for (const name of JOB_NAMES) {
    const handler = handlers[name];
    if (typeof handler !== 'function') throw new Error(`no handler registered for job ${name}`);
    registry.set(name, handler);
  }
  return registry;
}

/** The BullMQ processor: bad payloads and unknown jobs fail without retries. */
export function processorFor(registry: Map<JobName, Handler>) {
  return async (job: Job): Promise<string> => {
    const handler = registry.get(job.name as JobName);
    if (!handler) throw new UnrecoverableError(`unknown job ${job.name}`);
    const parsed = JOBS[job.name as JobName].schema.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError(`invalid ${job.name} payload: ${parsed.error.message}`);
    return handler(parsed.data, job);
  };
}
