import type { Dimension, TaskComplexity } from './arms';

/** Evidence about one chosen value: [count, rewardSum, startedCount] in this context and overall. */
export interface ValueEvidence {
  dimension: Dimension;
  value: string;
  inContext: readonly [number, number, number];
  overall: readonly [number, number, number];
  pinned: boolean;
  explored: boolean;
}

const NOUN: Record<Dimension, (value: string) => string> = {
  framing: (v) => `tasks framed as ${v}`,
  style: (v) => `a ${v} communication style`,
  complexity: (v) => `${v} task handling`,
  encouragement: (v) => `${v} encouragement`,
};

/** The value as the subject of "is being tried". */
const TRIED: Record<Dimension, (value: string) => string> = {
  framing: (v) => `the ${v} framing`,
  style: (v) => `the ${v} style`,
  complexity: (v) => `${v} handling`,
  encouragement: (v) => `${v} encouragement`,
};

const LABEL: Record<Dimension, string> = {
  framing: 'framing',
  style: 'communication style',
  complexity: 'complexity handling',
  encouragement: 'encouragement',
};

function times(n: number): string {
  return n === 1 ? '1 time' : `${n} times`;
}

function evidenceSentence(e: ValueEvidence, complexity: TaskComplexity, interactionCount: number): string {
  const subject = NOUN[e.dimension](e.value);
  const [n, sum, started] = e.inContext;
  if (n > 0) {
    const capitalized = subject.charAt(0).toUpperCase() + subject.slice(1);
    return `${capitalized} at ${complexity} complexity led this user to start ${started} of ${n} tasks (average reward ${(sum / n).toFixed(2)}).`;
  }
  const [an, asum, astarted] = e.overall;
  if (an > 0) {
    return `No ${complexity}-complexity outcomes yet for ${subject}; across other tasks this user started ${astarted} of ${an} (average reward ${(asum / an).toFixed(2)}).`;
  }
  if (interactionCount === 0) {
    return `No outcomes reported for this user yet, so ${TRIED[e.dimension](e.value)} is being tried first; recommendations adapt with each reported outcome.`;
  }
  return `This user has ${interactionCount} reported outcome${interactionCount === 1 ? '' : 's'} but none with ${subject} yet, so ${TRIED[e.dimension](e.value)} is being tried.`;
}

/**
 * One or two plain sentences from this user's evidence: the framing's track record, then what
 * is pinned or explored. Never a fixed string: counts and rewards come from the state.
 */
export function buildRationale(evidence: ValueEvidence[], complexity: TaskComplexity, interactionCount: number): string {
  const lead = evidence.find((e) => !e.pinned);
  const pinnedList = (items: ValueEvidence[]) => items.map((e) => `${LABEL[e.dimension]} (${e.value})`).join(', ');
  if (!lead) {
    // Everything is pinned: say so, and what this user's evidence says about the framing.
    const framing = evidence[0]!;
    const sentences = [`Every dimension is pinned by the app: ${pinnedList(evidence)}.`];
    if (framing.inContext[0] > 0 || framing.overall[0] > 0) sentences.push(evidenceSentence(framing, complexity, interactionCount));
    return sentences.join(' ');
  }
  const sentences = [evidenceSentence(lead, complexity, interactionCount)];
  const pinned = evidence.filter((e) => e.pinned);
  const explored = evidence.filter((e) => e.explored);
  const notes: string[] = [];
  if (pinned.length > 0) {
    notes.push(`${pinnedList(pinned)} ${pinned.length === 1 ? 'is' : 'are'} pinned by the app`);
  }
  if (explored.length > 0 && interactionCount > 0) {
    notes.push(
      `exploring ${explored.map((e) => `${LABEL[e.dimension]} ${e.value} (tried ${times(e.overall[0])})`).join(', ')} to learn more`,
    );
  }
  if (notes.length > 0) {
    const text = notes.join('; ');
    sentences.push(text.charAt(0).toUpperCase() + text.slice(1) + '.');
  }
  return sentences.join(' ');
}
