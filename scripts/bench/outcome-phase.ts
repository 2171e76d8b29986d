import { alternate, type AbResult } from './ab';
import type { ContextPhases } from './context-phase';
import { cannon, postEach } from './load-client';
import type { LoadRig } from './load-rig';
import { rss, type Rss } from './memory';
import { log, mustBeRunning, waitUntil } from './processes';
import { requestIdOf } from './worker-backlog';

/**
 * The outcome phase of bench:load: POST /v1/outcome at full load with the worker stopped (so
 * the backlog it leaves can time the worker afterwards), alternated with the bare baseline.
 * Every outcome names its own requestId, issued beforehand; each round has its own share.
 */

export interface OutcomePhase extends AbResult {
  requestIdsIssued: number;
  /** Rounds that used up their share of requestIds before `--duration` (their rate still holds). */
  roundsEndedEarly: number;
  /** Distinct outcomes waiting in the queue afterwards, and the jobs they wait in. */
  backlog: { accepted: number; jobs: number };
  rssAfter: { api: Rss };
}

export async function outcomePhase(rig: LoadRig, context: ContextPhases): Promise<OutcomePhase> {
  const { connections, duration, rounds } = rig.opts;
  // As many requestIds as bare Express could take in the outcome rounds (no handler outruns
  // it), but at most 4 durations' worth of issuing per round.
  const perRound = Math.min(
    200_000,
    Math.ceil(context.testKey.bare.all.rps * duration * 1.15) + connections,
    Math.ceil(context.testKey.subject.all.rps * duration * 4) + connections,
  );
  log(`issuing ${perRound * rounds} requestIds for the outcome rounds…`);
  const ids: string[] = [];
  await cannon(
    rig.api.port,
    {
      ...rig.contextRequest(rig.headers),
      onResponse: (status, body) => {
        if (status === 200) ids.push(requestIdOf(body));
      },
    },
    { connections, amount: perRound * rounds, duration: Math.ceil((perRound * rounds) / Math.max(1, context.testKey.subject.all.rps)) * 2 },
  );
  mustBeRunning(rig.api.proc, ...rig.workers);
  if (ids.length < connections * 2 * rounds) throw new Error(`only ${ids.length} requestIds were issued`);
  await rig.drained('the decisions of the issued requestIds to be applied');
  log('stopping the worker(s) so outcomes queue up…');
  await rig.stopWorkers();

  const shares = Array.from({ length: rounds }, (_, r) =>
    ids.slice(Math.floor((r * ids.length) / rounds), Math.floor(((r + 1) * ids.length) / rounds)),
  );
  let roundsEndedEarly = 0;
  const outcomeRound = () => {
    const share = shares.shift()!;
    let next = 0;
    const body = () => {
      const i = Math.min(next++, share.length - 1);
      return JSON.stringify({ requestId: share[i], started: true, completed: i % 3 !== 0, satisfaction: (i % 5) / 4 });
    };
    return cannon(rig.api.port, postEach('/v1/outcome', rig.headers, body), {
      connections,
      duration,
      maxOverallRequests: share.length,
    }).then((run) => {
      if (next >= share.length) roundsEndedEarly++;
      return run;
    });
  };
  const ab = await alternate(rig, {
    what: 'outcome (worker stopped)',
    bare: () => cannon(rig.bare.port, postEach('/bare', rig.headers, rig.contextBody), { connections, duration }),
    subject: outcomeRound,
  });
  mustBeRunning(rig.api.proc);

  // Requests still in flight when a round stopped may add a few outcomes: wait until stable.
  let jobs = -1;
  await waitUntil('the outcome queue to settle', 10_000, 300, async () => {
    const now = (await rig.queues.counts()).pending;
    const stable = now === jobs;
    jobs = now;
    return stable ? true : undefined;
  });
  const accepted = (await rig.queues.queuedOutcomeIds()).size;
  log(`${accepted} outcomes queued in ${jobs} jobs`);
  return {
    ...ab,
    requestIdsIssued: ids.length,
    roundsEndedEarly,
    backlog: { accepted, jobs },
    rssAfter: { api: rss(rig.roles.api ?? []) },
  };
}
