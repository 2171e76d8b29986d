import { UnrecoverableError, type Job } from 'bullmq';
import { JOBS, JOB_NAMES, type JobName } from '../shared/jobs/catalog';
import type { EventBatcher } from './event-batcher';

type Handler = (data: unknown) => Promise<string>;

/** Maps every catalog job to exactly one handler; the worker refuses to boot otherwise. */
export function buildRegistry(batcher: EventBatcher): Map<JobName, Handler> {
  const handlers: Record<JobName, Handler> = {
    decision: (data) => batcher.submit({ kind: 'decision', data: JOBS.decision.schema.parse(data) }),
    outcome: (data) => batcher.submit({ kind: 'outcome', data: JOBS.outcome.schema.parse(data) }),
  };
  const registry = new Map<JobName, Handler>();
  for (const name of JOB_NAMES) {
    const handler = handlers[name];
    if (!handler) throw new Error(`no handler registered for job ${name}`);
    registry.set(name, handler);
  }
  return registry;
}

/** The BullMQ processor: bad payloads and unknown jobs fail without retries. */
export function processorFor(registry: Map<JobName, Handler>) {
  return async (job: Job): Promise<string> => {
    const handler = registry.get(job.name as JobName);
    if (!handler) throw new UnrecoverableError(`unknown job ${job.name}`);
    const schema = JOBS[job.name as JobName].schema;
    const parsed = schema.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError(`invalid ${job.name} payload: ${parsed.error.message}`);
    return handler(parsed.data);
  };
}
