import { NOISY_OTHER_PERCENT, type AbResult } from './ab';
import type { ContextPhases } from './context-phase';
import type { OutcomePhase } from './outcome-phase';
import type { WorkerPhase } from './worker-phase';
import type { WorkerRound } from './worker-backlog';

/** bench:load's targets, judged on the phases' figures. */

export interface Target {
  name: string;
  measured: number;
  target: number;
  pass: boolean;
  /** Other work on the machine used more than NOISY_OTHER_PERCENT of a core during a run it rests on. */
  noisy: boolean;
}

export const CONTEXT_RATIO_TARGET = 0.9;
export const OUTCOME_RATIO_TARGET = 0.8;
/** Requests per second of the steady (open-loop) phase unless `--steady-rate` says otherwise. */
export const STEADY_RATE = 1000;
export const WORKER_OUTCOMES_PER_SEC_TARGET = 5000;

const workerNoisy = (round: WorkerRound) => (round.cpuPercentOfOneCore.other ?? 0) > NOISY_OTHER_PERCENT;
const ratioTarget = (name: string, ab: AbResult, target: number): Target => ({
  name,
  measured: ab.ratio,
  target,
  pass: ab.ratio >= target,
  noisy: ab.noisy,
});

export function judge(context: ContextPhases, outcome: OutcomePhase, worker: WorkerPhase): Target[] {
  const { headline, baseline, comparison } = worker;
  const steady = context.steadyLoad;
  return [
    ratioTarget(`context (test key) ≥ ${CONTEXT_RATIO_TARGET} × bare`, context.testKey, CONTEXT_RATIO_TARGET),
    ratioTarget(`context (live key) ≥ ${CONTEXT_RATIO_TARGET} × bare`, context.liveKey, CONTEXT_RATIO_TARGET),
    {
      name: `context p99 at a steady ${steady.rate}/s ≤ max(5, 1.5 × bare p99) ms`,
      measured: steady.subject.all.p99,
      target: steady.p99LimitMs,
      pass: steady.pass,
      noisy: steady.noisy,
    },
    ratioTarget(`outcome ≥ ${OUTCOME_RATIO_TARGET} × bare`, outcome, OUTCOME_RATIO_TARGET),
    {
      name: `worker ≥ 5,000 outcomes/s, exactly once (${headline.workers} process${headline.workers === 1 ? '' : 'es'})`,
      measured: headline.outcomesPerSec,
      target: WORKER_OUTCOMES_PER_SEC_TARGET,
      pass: headline.outcomesPerSec >= WORKER_OUTCOMES_PER_SEC_TARGET && headline.check.exactlyOnce,
      noisy: workerNoisy(headline),
    },
    {
      name: `${comparison.workers} workers no slower than ${baseline.workers}, exactly once (backlogs made alike)`,
      measured: comparison.outcomesPerSec,
      target: baseline.outcomesPerSec,
      pass: comparison.outcomesPerSec >= baseline.outcomesPerSec && comparison.check.exactlyOnce && baseline.check.exactlyOnce,
      noisy: workerNoisy(baseline) || workerNoisy(comparison),
    },
  ];
}
