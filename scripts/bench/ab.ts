import { costPer, type Roles } from './cpu';
import type { LoadRig, Measured } from './load-rig';
import { poolCpu, poolRuns, rateRatio, summarize, type LoadRun, type RunSummary } from './load-stats';
import { log } from './processes';

/**
 * The A/B alternation of bench:load: the bare baseline (A) and the subject (B) measured in turn,
 * A, B, A, B…, so that a drift of the machine's speed during the run moves both sides alike.
 * The figure is the ratio of the two sides' rates, each summed over every round.
 */

/** A phase during which other work used more than this share of one core (%) is "noisy". */
export const NOISY_OTHER_PERCENT = 25;

export interface SideResult {
  /** Every round pooled: rate = 2xx answers ÷ seconds over all rounds, percentiles over all latencies. */
  all: RunSummary;
  rounds: RunSummary[];
  /** Other work on the machine during each round, % of one core. */
  otherPercent: number[];
  /** Append-only file rewrites Redis forked during each round (their CPU is in Redis's). */
  redisForks: number[];
  cpuPercentOfOneCore: Roles;
  /** CPU ms per 2xx answer by role, their total, and the rate all cores would give at that cost. */
  cpuCost: ReturnType<typeof costPer>;
}

export interface AbResult {
  bare: SideResult;
  subject: SideResult;
  /** subject rate ÷ bare rate, each over all rounds. */
  ratio: number;
  /** The same for each round on its own. */
  roundRatios: number[];
  /** Some round had other work above NOISY_OTHER_PERCENT. */
  noisy: boolean;
}

function side(measured: Array<Measured<LoadRun>>): SideResult {
  const runs = measured.map((m) => m.value);
  const pooled = poolRuns(runs);
  const cpu = poolCpu(measured);
  return {
    all: summarize(pooled),
    rounds: runs.map(summarize),
    otherPercent: measured.map((m) => m.cpu.other ?? 0),
    redisForks: measured.map((m) => m.redisForks),
    cpuPercentOfOneCore: cpu.cpu,
    cpuCost: costPer(cpu, pooled.ok),
  };
}

export async function alternate(
  rig: Pick<LoadRig, 'measure' | 'opts' | 'settle'>,
  o: {
    what: string;
    bare: () => Promise<LoadRun>;
    subject: () => Promise<LoadRun>;
    /** Before each run of either side (e.g. wait until the worker caught up). */
    beforeEach?: () => Promise<void>;
  },
): Promise<AbResult> {
  const bare: Array<Measured<LoadRun>> = [];
  const subject: Array<Measured<LoadRun>> = [];
  log(`${o.what}: ${rig.opts.rounds} rounds, bare and ${o.what} in turn…`);
  await rig.settle();
  for (let round = 1; round <= rig.opts.rounds; round++) {
    for (const [list, run, name] of [
      [bare, o.bare, 'bare'],
      [subject, o.subject, o.what],
    ] as const) {
      await o.beforeEach?.();
      const m = await rig.measure(run);
      list.push(m);
      const s = summarize(m.value);
      log(`  round ${round}, ${name}: ${s.rps} req/s, p50 ${s.p50} ms, p99 ${s.p99} ms, ${s.non2xx + s.errors + s.timeouts} failed`);
    }
  }
  const result = {
    bare: side(bare),
    subject: side(subject),
    ratio: rateRatio(
      subject.map((m) => m.value),
      bare.map((m) => m.value),
    ),
    roundRatios: subject.map((m, i) => rateRatio([m.value], [bare[i]!.value])),
  };
  const noisy = [...result.bare.otherPercent, ...result.subject.otherPercent].some((pct) => pct > NOISY_OTHER_PERCENT);
  log(`${o.what}: ${result.subject.all.rps} vs bare ${result.bare.all.rps} req/s → ${result.ratio}${noisy ? ' (noisy)' : ''}`);
  return { ...result, noisy };
}
