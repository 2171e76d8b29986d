import type { Dimension, TaskComplexity } from './arms';

/** Decayed evidence about one value: outcomes, tasks started and reward sum. */
export interface Evidence {
  n: number;
  started: number;
  rewardSum: number;
}

/** What the engine knows about one chosen value, for the rationale. */
export interface ValueEvidence {
  dimension: Dimension;
  value: string;
  /** This user's evidence in the request's task type (when it is tracked). */
  taskType: { name: string; evidence: Evidence } | null;
  /** This user's evidence at the request's complexity (at any complexity when the request gave none). */
  inContext: Evidence;
  /** This user's evidence at any complexity. */
  overall: Evidence;
  /** The population's (this client's users') evidence for this value at this complexity (any complexity when the request gave none), and its outcomes there with any value. */
  population: { n: number; meanReward: number; total: number };
  pinned: boolean;
  explored: boolean;
}

/** Evidence below this (decayed) weight is not worth quoting. */
const QUOTABLE = 0.5;

const NOUN: Record<Dimension, (value: string) => string> = {
  framing: (v) => `tasks framed as ${v}`,
  style: (v) => `tasks presented in a ${v} style`,
  complexityHandling: (v) => `tasks with ${v} handling`,
  encouragement: (v) => `tasks with ${v} encouragement`,
};

const LABEL: Record<Dimension, string> = {
  framing: 'framing',
  style: 'communication style',
  complexityHandling: 'complexity handling',
  encouragement: 'encouragement',
};

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
const reward = (e: Evidence) => (e.rewardSum / e.n).toFixed(2);

/**
 * "were started in 7 of this user's 9 recent cases (average reward 0.71)", or for a single case
 * whether it was started. The evidence is decayed (recent outcomes count more), so both counts
 * are rounded, the started count as the started share of the rounded cases.
 */
function record(e: Evidence): string {
  const cases = Math.round(e.n);
  if (cases <= 1)
    return `${e.started / e.n >= 0.5 ? 'were started' : 'were not started'} the one recent time this user saw them (reward ${reward(e)})`;
  return `were started in ${Math.round((cases * e.started) / e.n)} of this user's ${cases} recent cases (average reward ${reward(e)})`;
}

/** "at high complexity", or "at any complexity" for a request without one. */
const atComplexity = (taskComplexity: TaskComplexity | undefined) =>
  taskComplexity ? `at ${taskComplexity} complexity` : 'at any complexity';

/** The strongest evidence behind one value, as a sentence. */
function evidenceSentence(e: ValueEvidence, taskComplexity: TaskComplexity | undefined, interactionCount: number): string {
  const subject = NOUN[e.dimension](e.value);
  if (e.taskType && e.taskType.evidence.n >= QUOTABLE) {
    const t = e.taskType.evidence;
    return `For "${e.taskType.name}" tasks, ${subject} ${record(t)}.`;
  }
  if (e.inContext.n >= QUOTABLE) {
    if (!taskComplexity) return `No complexity was given, so all of this user's outcomes count: ${subject} ${record(e.inContext)}.`;
    return `${capitalize(subject)} at ${taskComplexity} complexity ${record(e.inContext)}.`;
  }
  if (taskComplexity && e.overall.n >= QUOTABLE) {
    return `No recent ${taskComplexity}-complexity outcomes for ${subject}; at other complexities they ${record(e.overall)}.`;
  }
  const population = e.population.n >= QUOTABLE;
  const popText = `among this app's users, ${subject} ${atComplexity(taskComplexity)} average a reward of ${e.population.meanReward.toFixed(2)} over ${Math.round(e.population.n)} outcomes`;
  if (interactionCount === 0) {
    if (population) return `No outcomes from this user yet, so this follows the population: ${popText}.`;
    return e.population.total >= QUOTABLE
      ? `No outcomes from this user yet, and this app's users have ${e.population.n > 0 ? 'few' : 'no'} outcomes with ${subject} ${atComplexity(taskComplexity)}, so they are being tried; recommendations adapt with each reported outcome.`
      : `No outcomes from this user or this app's other users yet, so ${subject} are being tried first; recommendations adapt with each reported outcome.`;
  }
  return population
    ? `This user has ${interactionCount} reported outcome${interactionCount === 1 ? '' : 's'} but none with ${subject} recently; ${popText}.`
    : `This user has ${interactionCount} reported outcome${interactionCount === 1 ? '' : 's'} but none with ${subject} recently, so they are being tried.`;
}

/** How often a value was tried recently here, e.g. 'tried 2 times recently here'; '' when not. */
function triedHere(e: ValueEvidence): string {
  const cases = Math.round(e.inContext.n);
  return cases >= 1 ? `tried ${cases === 1 ? 'once' : `${cases} times`} recently here` : '';
}

/** "exploring communication style warm (tried once recently here) to learn more", grouped when alike. */
function explorationNote(explored: ValueEvidence[], taskComplexity: TaskComplexity | undefined): string {
  const name = (e: ValueEvidence) => `${LABEL[e.dimension]} ${e.value}`;
  const phrases = explored.map(triedHere);
  const untried = taskComplexity ? 'not tried recently at this complexity' : 'not tried recently';
  if (phrases.every((phrase) => phrase === phrases[0])) {
    const shared =
      phrases[0] === ''
        ? explored.length > 1
          ? `none ${untried.slice(4)}`
          : untried
        : explored.length > 1
          ? `each ${phrases[0]}`
          : phrases[0];
    return `exploring ${explored.map(name).join(', ')} (${shared}) to learn more`;
  }
  return `exploring ${explored.map((e, i) => `${name(e)} (${phrases[i] || untried})`).join(', ')} to learn more`;
}

const pinnedList = (items: ValueEvidence[]) => items.map((e) => `${LABEL[e.dimension]} (${e.value})`).join(', ');

/**
 * One or two plain sentences from this user's evidence: the track record of the first
 * dimension the app has not pinned (usually the framing) — in this task type, at this
 * complexity, elsewhere, or the population's when the user has none — then what is pinned or
 * being explored. Never a fixed string: rates, counts and rewards come from the evidence. A
 * request without complexity (`taskComplexity` undefined) is answered from all of the user's
 * outcomes, and the population's at any complexity.
 */
export function buildRationale(evidence: ValueEvidence[], taskComplexity: TaskComplexity | undefined, interactionCount: number): string {
  const lead = evidence.find((e) => !e.pinned);
  if (!lead) {
    const sentences = [`Every dimension is pinned by the app: ${pinnedList(evidence)}.`];
    const framing = evidence[0]!;
    if (framing.inContext.n >= QUOTABLE || framing.overall.n >= QUOTABLE)
      sentences.push(evidenceSentence(framing, taskComplexity, interactionCount));
    return sentences.join(' ');
  }
  const notes: string[] = [];
  const pinned = evidence.filter((e) => e.pinned);
  if (pinned.length > 0) notes.push(`${pinnedList(pinned)} ${pinned.length === 1 ? 'is' : 'are'} pinned by the app`);
  const explored = evidence.filter((e) => e.explored);
  if (explored.length > 0) notes.push(explorationNote(explored, taskComplexity));
  const sentences = [evidenceSentence(lead, taskComplexity, interactionCount)];
  if (notes.length > 0) sentences.push(`${capitalize(notes.join('; '))}.`);
  return sentences.join(' ');
}
