import { LOAD_GENERATOR, type LoadRig } from './load-rig';
import { rss, type Rss } from './memory';
import { log } from './processes';
import { buildOutcomeBacklog, timeBacklog, type Backlog, type WorkerRound } from './worker-backlog';

/**
 * The worker phase of bench:load: `--workers` worker processes timed on the backlog the
 * outcome phase left, then `--compare-workers` on a backlog of the same size made the same way
 * (through the API, `--connections` requests in flight), each checked for exactly once.
 */

export interface WorkerPhase {
  headline: WorkerRound;
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

  log(`a backlog of ${backlog.accepted} outcomes for ${compareWorkers} worker(s)…`);
  const second = await buildOutcomeBacklog({
    port: rig.api.port,
    headers: rig.headers,
    count: backlog.accepted,
    concurrency: connections,
    contextCall: () => ({ path: '/v1/context', body: rig.contextPayload() }),
    drained: rig.drained,
    stopWorkers: () => rig.stopWorkers(),
    queues: rig.queues,
  });
  const comparison = await time(compareWorkers, second);
  return { headline: headline.round, comparison: comparison.round, rssAfter: { headline: headline.rss, comparison: comparison.rss } };
}
