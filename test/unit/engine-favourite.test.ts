import { PERSISTENCE, favouritePosterior, favouriteScratch, type DimensionModel } from '../../shared/domain/engine/favourite';
import { CELL_COUNT, COMPLEXITY_COUNT, DIMENSION_OFFSET, VALUE_COUNT, cellIndex } from '../../shared/domain/engine/layout';
import { seededRandom } from '../../shared/domain/random';

const scratch = favouriteScratch();

const FRAMING = DIMENSION_OFFSET.framing;
const K = 5;

function model(overrides: Partial<DimensionModel> = {}, random = seededRandom(3)): DimensionModel {
  const popBest = new Float64Array(CELL_COUNT);
  for (let c = 0; c < COMPLEXITY_COUNT; c++) {
    const raw = Array.from({ length: K }, () => random() + 0.01);
    const total = raw.reduce((s, x) => s + x, 0);
    raw.forEach((x, v) => (popBest[cellIndex(c, FRAMING + v)] = x / total));
  }
  return {
    offset: FRAMING,
    count: K,
    follow: 0.55,
    popBest,
    mid: Float64Array.from([0.5, 0.45, 0.4]),
    step: 0.4,
    weight: 0.4 / 0.12,
    ...overrides,
  };
}

/**
 * The posterior by brute force: every (f_low, f_medium, f_high), its prior under the mixture of
 * favourite.ts and the Gaussian likelihood of the evidence (up to a constant).
 */
function bruteForce(m: DimensionModel, n: Float64Array, s: Float64Array) {
  const marg = new Float64Array(CELL_COUNT);
  let total = 0;
  let followerMass = 0;
  const cell = (c: number, v: number) => cellIndex(c, m.offset + v);
  for (let a = 0; a < K; a++)
    for (let b = 0; b < K; b++)
      for (let d = 0; d < K; d++) {
        const f = [a, b, d];
        const follower = m.follow * f.reduce((p, v, c) => p * m.popBest[cell(c, v)]!, 1);
        let individual = 0;
        for (let g = 0; g < K; g++)
          individual += ((1 - m.follow) / K) * f.reduce((p, v) => p * ((v === g ? PERSISTENCE : 0) + (1 - PERSISTENCE) / K), 1);
        // log-likelihood: favourite cells at the upper level, others at the lower one (common terms dropped)
        let ll = 0;
        for (let c = 0; c < COMPLEXITY_COUNT; c++) ll += m.weight * (s[cell(c, f[c]!)]! - n[cell(c, f[c]!)]! * m.mid[c]!);
        const weight = (follower + individual) * Math.exp(ll);
        total += weight;
        followerMass += follower * Math.exp(ll);
        f.forEach((v, c) => (marg[cell(c, v)]! += weight));
      }
  return { marg: marg.map((x) => x / total), follower: followerMass / total };
}

describe('favouritePosterior', () => {
  it('matches brute-force enumeration of the three favourites on random evidence (to 1e-12)', () => {
    const random = seededRandom(7);
    for (let trial = 0; trial < 20; trial++) {
      const m = model({ follow: random(), step: 0.1 + random(), weight: 1 + 5 * random() }, random);
      const n = new Float64Array(CELL_COUNT);
      const s = new Float64Array(CELL_COUNT);
      for (let c = 0; c < COMPLEXITY_COUNT; c++)
        for (let v = 0; v < K; v++) {
          const count = random() < 0.5 ? 0 : Math.floor(random() * 6) * 0.97;
          n[cellIndex(c, FRAMING + v)] = count;
          s[cellIndex(c, FRAMING + v)] = count * random();
        }
      const out = new Float64Array(CELL_COUNT);
      const follower = favouritePosterior(m, { n, s, contexts: 3 }, out, scratch);
      const expected = bruteForce(m, n, s);
      expect(follower).toBeCloseTo(expected.follower, 12);
      for (let c = 0; c < COMPLEXITY_COUNT; c++)
        for (let v = 0; v < K; v++) expect(out[cellIndex(c, FRAMING + v)]).toBeCloseTo(expected.marg[cellIndex(c, FRAMING + v)]!, 12);
    }
  });

  it('without evidence is the prior: follow · popBest + (1 − follow) / k, and P(follower) = follow', () => {
    const m = model();
    const out = new Float64Array(CELL_COUNT);
    const follower = favouritePosterior(m, { n: new Float64Array(CELL_COUNT), s: new Float64Array(CELL_COUNT), contexts: 3 }, out, scratch);
    expect(follower).toBeCloseTo(m.follow, 12);
    for (let c = 0; c < COMPLEXITY_COUNT; c++) {
      let sum = 0;
      for (let v = 0; v < K; v++) {
        const cell = cellIndex(c, FRAMING + v);
        expect(out[cell]).toBeCloseTo(m.follow * m.popBest[cell]! + (1 - m.follow) / K, 12);
        sum += out[cell]!;
      }
      expect(sum).toBeCloseTo(1, 12);
    }
  });

  it('keeps values that the prior and the evidence cannot tell apart exactly tied (a new tenant’s new user)', () => {
    const popBest = new Float64Array(CELL_COUNT);
    for (let c = 0; c < COMPLEXITY_COUNT; c++) for (let v = 0; v < K; v++) popBest[cellIndex(c, FRAMING + v)] = 1 / K;
    const n = new Float64Array(CELL_COUNT);
    const s = new Float64Array(CELL_COUNT);
    // The same evidence on every value at medium complexity, none elsewhere.
    for (let v = 0; v < K; v++) [n[cellIndex(1, FRAMING + v)], s[cellIndex(1, FRAMING + v)]] = [0.97, 0.41];
    const out = new Float64Array(CELL_COUNT);
    favouritePosterior(model({ popBest }), { n, s, contexts: 3 }, out, scratch);
    for (let c = 0; c < COMPLEXITY_COUNT; c++) {
      const first = out[cellIndex(c, FRAMING)]!;
      for (let v = 1; v < K; v++) expect(out[cellIndex(c, FRAMING + v)]).toBe(first);
      expect(first).toBeCloseTo(1 / K, 12);
    }
  });

  it('writes only its own dimension’s cells', () => {
    const out = new Float64Array(CELL_COUNT).fill(-1);
    favouritePosterior(model(), { n: new Float64Array(CELL_COUNT), s: new Float64Array(CELL_COUNT), contexts: 3 }, out, scratch);
    for (let cell = 0; cell < CELL_COUNT; cell++) {
      const slot = cell % VALUE_COUNT;
      if (slot >= FRAMING + K) expect(out[cell]).toBe(-1);
      else expect(out[cell]).toBeGreaterThan(0);
    }
  });

  it('a value that keeps succeeding becomes the favourite; one that keeps failing is ruled out', () => {
    const m = model();
    const n = new Float64Array(CELL_COUNT);
    const s = new Float64Array(CELL_COUNT);
    const out = new Float64Array(CELL_COUNT);
    const curiosity = cellIndex(1, FRAMING + 4);
    const purpose = cellIndex(1, FRAMING + 2);
    n[purpose] = 3;
    s[purpose] = 0.1; // three failures
    favouritePosterior(m, { n, s, contexts: 3 }, out, scratch);
    expect(out[purpose]).toBeLessThan(0.05);
    n[curiosity] = 4;
    s[curiosity] = 3.4; // four successes
    favouritePosterior(m, { n, s, contexts: 3 }, out, scratch);
    expect(out[curiosity]).toBeGreaterThan(0.9);
  });

  it('an individual’s favourite carries to other complexities (persistence); a follower’s does not', () => {
    // A user who loved curiosity at low complexity, where the population prefers time_boxed.
    const popBest = new Float64Array(CELL_COUNT);
    for (let c = 0; c < COMPLEXITY_COUNT; c++) for (let v = 0; v < K; v++) popBest[cellIndex(c, FRAMING + v)] = v === 1 ? 0.96 : 0.01;
    const m = model({ popBest });
    const n = new Float64Array(CELL_COUNT);
    const s = new Float64Array(CELL_COUNT);
    n[cellIndex(0, FRAMING + 4)] = 6;
    s[cellIndex(0, FRAMING + 4)] = 5.4;
    n[cellIndex(0, FRAMING + 1)] = 2;
    s[cellIndex(0, FRAMING + 1)] = 0.1;
    const out = new Float64Array(CELL_COUNT);
    const follower = favouritePosterior(m, { n, s, contexts: 3 }, out, scratch);
    expect(follower).toBeLessThan(0.1); // no more than the population's odds on curiosity allow
    // At high complexity (no evidence), curiosity is now the best bet by far: P(core = curiosity) ≈ 0.75 times
    // PERSISTENCE + (1 − PERSISTENCE) / 5, while every other value, the population's time_boxed included, is below chance.
    const high = [0, 1, 2, 3, 4].map((v) => out[cellIndex(2, FRAMING + v)]!);
    expect(high[4]).toBeGreaterThan(0.5);
    expect(Math.max(...high.slice(0, 4))).toBeLessThan(1 / 5);
  });

  it('stays finite and normalised with extreme evidence', () => {
    const m = model({ weight: 50 });
    const n = new Float64Array(CELL_COUNT).fill(40);
    const s = Float64Array.from({ length: CELL_COUNT }, (_, i) => (i % 7 === 0 ? 40 : 0));
    const out = new Float64Array(CELL_COUNT);
    const follower = favouritePosterior(m, { n, s, contexts: 3 }, out, scratch);
    expect(Number.isFinite(follower)).toBe(true);
    for (let c = 0; c < COMPLEXITY_COUNT; c++) {
      let sum = 0;
      for (let v = 0; v < K; v++) sum += out[cellIndex(c, FRAMING + v)]!;
      expect(sum).toBeCloseTo(1, 9);
    }
  });
});
