import { LOAD_GENERATOR, type LoadRig } from './load-rig';
import { rss, type Rss } from './memory';
import { log } from './processes';
import { buildOutcomeBacklog, timeBacklog, type Backlog, type WorkerRound } from './worker-backlog';

/**
 * The worker phase of bench:load: `--workers` worker processes timed on the backlog the
 * outcome phase left (the headline); then, on two more backlogs of that size made the same way
 * as each other (through the API, `--connections` requests in flight), `--workers` and then
 * `--compare-workers` workers, each checked for exactly once. The comparison is between those
 * two: how a backlog is made sets how many outcomes its jobs hold (autocannon's and this
 * client's differ), and a worker's cost per job is not small.
 */

export interface WorkerPhase {
  headline: WorkerRound;
  /** `--workers` workers on a backlog made like the comparison's. */
  baseline: WorkerRound;
  comparison: WorkerRound;
  rssAfter: { headline: Rss; comparison: Rss };
}

export async function workerPhase(rig: LoadRig, backlog: Pick<Backlog, 'accepted' | 'jobs'>): Promise<WorkerPhase> {
  const { workers, compareWorkers, connections } = rig.opts;
  const time = async (workerCount: number, on: Pick<Backlog, 'accepted' | 'jobs'>) => {
    await rig.settle();
    log(`starting ${workerCount} worker(s) on ${on.accepted} queued outcomes in ${on.jobs} jobs…`);
    const round = await timeBacklog({
      db: rig.db,
      queues: rig.queues,
      backlog: on,
      workerCount,
      startWorkers: (n) => rig.startWorkers(n),
      snapshot: () => rig.snapshot(),
      selfRole: LOAD_GENERATOR,
    });
    log(`${workerCount} worker(s): ${round.outcomesPerSec} outcomes/s; exactly once: ${round.check.exactlyOnce}`);
    return { round, rss: rss(rig.roles.worker ?? []) };
  };
  const headline = await time(workers, backlog);

  const madeAlike = async (workerCount: number) => {
    log(`a backlog of ${backlog.accepted} outcomes for ${workerCount} worker(s)…`);
    const made = await buildOutcomeBacklog({
      port: rig.api.port,
      headers: rig.headers,
      count: backlog.accepted,
      concurrency: connections,
      contextCall: () => ({ path: '/v1/context', body: rig.contextPayload() }),
      drained: rig.drained,
      stopWorkers: () => rig.stopWorkers(),
      queues: rig.queues,
    });
    return time(workerCount, made);
  };
  // The comparison runs second, on a database the baseline has grown: any bias is against it.
  const baseline = await madeAlike(workers);
  const comparison = await madeAlike(compareWorkers);
  return {
    headline: headline.round,
    baseline: baseline.round,
    comparison: comparison.round,
    rssAfter: { headline: headline.rss, comparison: comparison.rss },
  };
}
