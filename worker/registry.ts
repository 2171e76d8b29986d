import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { JOBS, JOB_NAMES, type JobName, type JobPayload } from '../shared/jobs/catalog';
import { isDependencyUnavailable } from '../shared/errors/unavailable';
import type { DependencyWatch } from '../shared/health/dependency-watch';

/** A job's handler, typed by its catalog payload; `token` is the job's lock (to move it to the delayed set). */
export type Handler<N extends JobName> = (data: JobPayload<N>, job: Job, token?: string) => Promise<string>;
export type Handlers = { [N in JobName]: Handler<N> };

/** Every catalog job has exactly one handler; the worker refuses to boot otherwise. */
export function buildRegistry(handlers: Handlers): Handlers {
  for (const name of JOB_NAMES) {
    if (typeof handlers[name] !== 'function') throw new Error(`no handler registered for job ${name}`);
  }
  return handlers;
}

const isJobName = (name: string): name is JobName => Object.hasOwn(JOBS, name);

function run<N extends JobName>(registry: Handlers, name: N, job: Job, token?: string): Promise<string> {
  const parsed = JOBS[name].schema.safeParse(job.data);
  if (!parsed.success) throw new UnrecoverableError(`invalid ${name} payload: ${parsed.error.message}`);
  return registry[name](parsed.data as JobPayload<N>, job, token);
}

/**
 * The BullMQ processor: bad payloads and unknown jobs fail without retries, so do handler
 * failures that can never succeed. A job that failed because Redis or Postgres is away waits
 * the outage out in hand — run again once the watch sees every dependency back — instead of
 * spending an attempt: however long the outage, no job is parked by it
 * (docs/adr/0018-deadlines.md). A failure the probes do not confirm (a passing fault) is
 * retried by BullMQ as before.
 */
export function processorFor(registry: Handlers, watch: Pick<DependencyWatch, 'failed' | 'whenAllUp' | 'anyDown' | 'closed'>) {
  return async (job: Job, token?: string): Promise<string> => {
    const name = job.name;
    if (!isJobName(name)) throw new UnrecoverableError(`unknown job ${name}`);
    for (;;) {
      await watch.whenAllUp();
      try {
        return await run(registry, name, job, token);
      } catch (error) {
        if (isDependencyUnavailable(error)) {
          await watch.failed(error);
          if (watch.anyDown && !watch.closed) continue;
          // The worker is stopping during the outage: the job goes back for later without
          // spending an attempt (nor a log line) — whichever worker runs then applies it.
          if (watch.anyDown && token !== undefined) {
            await job.moveToDelayed(Date.now() + HANDED_BACK_DELAY_MS, token);
            throw new DelayedError();
          }
        }
        throw error;
      }
    }
  };
}

/** How long a job handed back by a worker that stops during an outage waits before it is taken again. */
const HANDED_BACK_DELAY_MS = 1000;
