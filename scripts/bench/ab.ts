import { costPer, type Roles } from './cpu';
import type { LoadRig, Measured } from './load-rig';
import { poolCpu, poolRuns, rateRatio, summarize, type LoadRun, type RunSummary } from './load-stats';
import { log } from './processes';

/**
 * The A/B alternation of bench:load: the bare baseline (A) and the subject (B) measured in turn,
 * A, B, A, B…, so that a drift of the machine's speed during the run moves both sides alike;
 * with two subjects A, B, C, A, C, B… (alternateAll). The figure is the ratio of a subject's and
 * the bare side's rates, each summed over every round.
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

/** One subject of an alternation: what it is called in the log, and one timed run of it. */
interface Subject {
  what: string;
  run: () => Promise<LoadRun>;
}

/** alternateAll with a single subject. */
export async function alternate(
  rig: Pick<LoadRig, 'measure' | 'opts' | 'settle'>,
  o: { what: string; bare: () => Promise<LoadRun>; subject: () => Promise<LoadRun>; beforeEach?: () => Promise<void> },
): Promise<AbResult> {
  const { only } = await alternateAll(rig, {
    bare: o.bare,
    subjects: { only: { what: o.what, run: o.subject } },
    beforeEach: o.beforeEach,
  });
  return only;
}

/**
 * The bare baseline and several subjects in turn, each round bare first and then every subject,
 * the subjects' order reversed every other round: subjects compared with each other meet the
 * same state of the machine and of the stores (a later phase would find Redis fuller and its
 * append-only file larger), and each is compared with the same bare runs. An AbResult per
 * subject, under the subject's name.
 */
export async function alternateAll<Name extends string>(
  rig: Pick<LoadRig, 'measure' | 'opts' | 'settle'>,
  o: {
    bare: () => Promise<LoadRun>;
    subjects: Record<Name, Subject>;
    /** Before each run of any side (e.g. wait until the worker caught up). */
    beforeEach?: () => Promise<void>;
  },
): Promise<Record<Name, AbResult>> {
  const names = Object.keys(o.subjects) as Name[];
  const bare: Array<Measured<LoadRun>> = [];
  const measured = new Map(names.map((name) => [name, [] as Array<Measured<LoadRun>>]));
  const what = names.map((name) => o.subjects[name].what).join(', ');
  log(`${what}: ${rig.opts.rounds} rounds, bare and ${what} in turn…`);
  await rig.settle();
  const timed = async (list: Array<Measured<LoadRun>>, run: () => Promise<LoadRun>, name: string, round: number) => {
    await o.beforeEach?.();
    const m = await rig.measure(run);
    list.push(m);
    const s = summarize(m.value);
    log(`  round ${round}, ${name}: ${s.rps} req/s, p50 ${s.p50} ms, p99 ${s.p99} ms, ${s.non2xx + s.errors + s.timeouts} failed`);
  };
  for (let round = 1; round <= rig.opts.rounds; round++) {
    await timed(bare, o.bare, 'bare', round);
    const order = round % 2 === 0 ? [...names].reverse() : names;
    for (const name of order) await timed(measured.get(name)!, o.subjects[name].run, o.subjects[name].what, round);
  }
  const bareSide = side(bare);
  const results = {} as Record<Name, AbResult>;
  for (const name of names) {
    const runs = measured.get(name)!;
    const result = {
      bare: bareSide,
      subject: side(runs),
      ratio: rateRatio(
        runs.map((m) => m.value),
        bare.map((m) => m.value),
      ),
      roundRatios: runs.map((m, r) => rateRatio([m.value], [bare[r]!.value])),
    };
    const noisy = [...result.bare.otherPercent, ...result.subject.otherPercent].some((pct) => pct > NOISY_OTHER_PERCENT);
    log(
      `${o.subjects[name].what}: ${result.subject.all.rps} vs bare ${result.bare.all.rps} req/s → ${result.ratio}${noisy ? ' (noisy)' : ''}`,
    );
    results[name] = { ...result, noisy };
  }
  return results;
}
