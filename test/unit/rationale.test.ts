import type { Dimension } from '../../shared/domain/arms';
import { buildRationale, type ValueEvidence } from '../../shared/domain/rationale';

const NONE = [0, 0, 0] as const;

function buildEvidence(overrides: Partial<Record<Dimension, Partial<ValueEvidence>>> = {}): ValueEvidence[] {
  const base: Record<Dimension, string> = { framing: 'curiosity', style: 'warm', complexity: 'chunked', encouragement: 'moderate' };
  return (Object.keys(base) as Dimension[]).map((dimension) => ({
    dimension,
    value: base[dimension],
    inContext: NONE,
    overall: NONE,
    pinned: false,
    explored: false,
    ...overrides[dimension],
  }));
}

describe('buildRationale', () => {
  it('at cold start says there are no outcomes yet and names the framing being tried', () => {
    const text = buildRationale(buildEvidence(), 'high', 0);
    expect(text).toMatch(/^No outcomes reported for this user yet/);
    expect(text).toContain('curiosity');
    expect(text).not.toMatch(/exploring/i);
    expect(text).not.toMatch(/pinned/i);
  });

  it('quotes starts, count and average reward in this complexity when there is evidence here', () => {
    const text = buildRationale(buildEvidence({ framing: { inContext: [4, 2.8, 3], overall: [9, 5, 6] } }), 'high', 9);
    expect(text).toBe('Tasks framed as curiosity at high complexity led this user to start 3 of 4 tasks (average reward 0.70).');
  });

  it('falls back to the evidence from other complexities when this one has none', () => {
    const text = buildRationale(buildEvidence({ framing: { overall: [3, 1.5, 2] } }), 'low', 3);
    expect(text).toBe(
      'No low-complexity outcomes yet for tasks framed as curiosity; across other tasks this user started 2 of 3 (average reward 0.50).',
    );
  });

  it('says a value without any evidence is being tried, with the user’s outcome count', () => {
    const text = buildRationale(buildEvidence(), 'medium', 7);
    expect(text).toContain('7 reported outcomes');
    expect(text).toContain('curiosity');
  });

  it('adds a pinned note and leads with the first dimension that is not pinned', () => {
    const text = buildRationale(buildEvidence({ framing: { pinned: true, value: 'purpose' }, style: { inContext: [2, 2, 2] } }), 'high', 2);
    expect(text).toMatch(/^A warm communication style at high complexity led this user to start 2 of 2 tasks/);
    expect(text).toMatch(/Framing \(purpose\) is pinned by the app\.$/);
  });

  it('lists several pins with a plural verb', () => {
    const text = buildRationale(buildEvidence({ framing: { pinned: true }, encouragement: { pinned: true } }), 'high', 0);
    expect(text).toContain('Framing (curiosity), encouragement (moderate) are pinned by the app.');
  });

  it('says every dimension is pinned, then gives the framing evidence', () => {
    const all = { pinned: true };
    const text = buildRationale(
      buildEvidence({ framing: { ...all, inContext: [1, 1, 1] }, style: all, complexity: all, encouragement: all }),
      'low',
      1,
    );
    expect(text).toMatch(/^Every dimension is pinned by the app: framing \(curiosity\), communication style/);
    expect(text).toMatch(/Tasks framed as curiosity at low complexity led this user to start 1 of 1 tasks/);
    expect(text).not.toMatch(/being tried/);
  });

  it('adds an exploring note with how often each explored value was tried', () => {
    const text = buildRationale(
      buildEvidence({ framing: { explored: true, overall: [1, 0.4, 1] }, style: { explored: true, overall: [3, 1, 2] } }),
      'high',
      6,
    );
    expect(text).toContain('Exploring framing curiosity (tried 1 time), communication style warm (tried 3 times) to learn more.');
  });

  it('omits the exploring note at cold start, where every choice is a first try', () => {
    const text = buildRationale(buildEvidence({ framing: { explored: true } }), 'high', 0);
    expect(text).not.toMatch(/exploring/i);
  });

  it('joins a pinned and an exploring note in one sentence', () => {
    const text = buildRationale(buildEvidence({ framing: { pinned: true }, style: { explored: true, overall: [2, 1, 1] } }), 'medium', 4);
    expect(text).toMatch(
      /Framing \(curiosity\) is pinned by the app; exploring communication style warm \(tried 2 times\) to learn more\.$/,
    );
  });
});
