import { UnrecoverableError, type Job } from 'bullmq';
import { JOBS, JOB_NAMES, type JobName, type JobPayload } from '../shared/jobs/catalog';
import { jobFailure } from './job-failures';

/** A job's handler, typed by its catalog payload. */
export type Handler<N extends JobName> = (data: JobPayload<N>, job: Job) => Promise<string>;
export type Handlers = { [N in JobName]: Handler<N> };

/** Every catalog job has exactly one handler; the worker refuses to boot otherwise. */
export function buildRegistry(handlers: Handlers): Handlers {
  for (const name of JOB_NAMES) {
    if (typeof handlers[name] !== 'function') throw new Error(`no handler registered for job ${name}`);
  }
  return handlers;
}

const isJobName = (name: string): name is JobName => Object.hasOwn(JOBS, name);

function run<N extends JobName>(registry: Handlers, name: N, job: Job): Promise<string> {
  const parsed = JOBS[name].schema.safeParse(job.data);
  if (!parsed.success) throw new UnrecoverableError(`invalid ${name} payload: ${parsed.error.message}`);
  return registry[name](parsed.data as JobPayload<N>, job);
}

/** The BullMQ processor: bad payloads and unknown jobs fail without retries, so do handler failures that can never succeed. */
export function processorFor(registry: Handlers) {
  return async (job: Job): Promise<string> => {
    if (!isJobName(job.name)) throw new UnrecoverableError(`unknown job ${job.name}`);
    try {
      return await run(registry, job.name, job);
    } catch (error) {
      throw jobFailure(error, job);
    }
  };
}
