import fc from 'fast-check';
import { forecastMonthEnd, type QuotaForecast } from '../../shared/traffic/quota-forecast';
import {
  evaluateKey,
  errorRateFinding,
  newCountryFindings,
  quotaFinding,
  refusedKeyFinding,
  volumeFinding,
  type KeyActivity,
} from '../../shared/traffic/patterns/rules';
import { PATTERN_THRESHOLDS as T } from '../../shared/traffic/patterns/thresholds';

const LAST_HOUR = Date.UTC(2026, 5, 10, 14);

/** A steady key with four weeks of history: ~100 requests an hour, 2 % errors. */
function steadyKey(overrides: Partial<KeyActivity> = {}): KeyActivity {
  return {
    keyId: 'key_steady',
    keyName: 'backend',
    last4: 'a1b2',
    refusal: null,
    historyHours: 28 * 24,
    lastHour: 104,
    lastHourAt: LAST_HOUR,
    sameHourPastDays: [100, 96, 108, 99, 103, 95, 110, 101, 97, 102, 100, 98, 105, 99],
    previousHours: Array.from({ length: 24 }, (_, i) => 95 + (i % 10)),
    recent: { requests: 25, errors: 0, unauthorized: 0 },
    before: { requests: 2400, errors: 48 },
    newCountries: [],
    quota: null,
    ...overrides,
  };
}

const quota = (overrides: Partial<QuotaForecast>): QuotaForecast => ({
  keyId: 'key_steady',
  keyName: 'backend',
  month: '2026-06',
  used: 40_000,
  quota: 100_000,
  forecast: 80_000,
  usedShare: 0.4,
  forecastShare: 0.8,
  ...overrides,
});

describe('unusual-pattern rules', () => {
  it('raise nothing on a quiet, steady key', () => {
    expect(evaluateKey(steadyKey(), T)).toEqual([]);
  });

  it('raise nothing on steady keys whatever their noise, as long as it stays within their own history', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5000 }),
        fc.array(fc.double({ min: 0.9, max: 1.1, noNaN: true }), { minLength: 15, maxLength: 15 }),
        (level, noise) => {
          const series = noise.map((factor) => Math.round(level * factor));
          expect(volumeFinding(steadyKey({ lastHour: series[0]!, sameHourPastDays: series.slice(1) }), T)).toBeNull();
        },
      ),
    );
  });

  it('raise nothing on a key with too little history, however it behaves', () => {
    const young = steadyKey({
      historyHours: 5,
      lastHour: 5000,
      sameHourPastDays: [],
      previousHours: [10, 10, 10, 10],
      newCountries: [{ country: 'KP', requests: 40 }],
      quota: quota({ forecast: 500_000, forecastShare: 5, used: 2000, usedShare: 0.02 }),
    });
    expect(evaluateKey(young, T)).toEqual([]);
  });

  describe('volume against the same hour of past days (median and MAD)', () => {
    it('flags an hour far above', () => {
      const finding = volumeFinding(steadyKey({ lastHour: 900 }), T);
      expect(finding).toMatchObject({ rule: 'volume-high', numbers: { requests: 900, median: 100, days: 14 } });
      expect(finding!.reason).toBe(
        '900 requests in the hour from 14:00 UTC, far above the median of 14:00 UTC over the last 14 days (100).',
      );
    });

    it('flags an hour far below', () => {
      expect(volumeFinding(steadyKey({ lastHour: 3 }), T)).toMatchObject({ rule: 'volume-low', numbers: { requests: 3, median: 100 } });
    });

    it('is not moved by one past outlier day', () => {
      const days = [100, 96, 108, 99, 103, 95, 5000, 101, 97, 102];
      expect(volumeFinding(steadyKey({ lastHour: 104, sameHourPastDays: days }), T)).toBeNull();
      expect(volumeFinding(steadyKey({ lastHour: 900, sameHourPastDays: days }), T)?.rule).toBe('volume-high');
    });

    it('ignores small absolute swings of a tiny key', () => {
      expect(volumeFinding(steadyKey({ lastHour: 30, sameHourPastDays: Array(10).fill(2) }), T)).toBeNull();
    });
  });

  describe('volume with short history (the previous hours’ mean)', () => {
    const young = (lastHour: number) =>
      steadyKey({ historyHours: 60, sameHourPastDays: [100, 100], lastHour, previousHours: Array(24).fill(100) });

    it('flags an hour four times the mean, or a quarter of it', () => {
      expect(volumeFinding(young(450), T)).toMatchObject({ rule: 'volume-high', numbers: { mean: 100, hours: 24 } });
      expect(volumeFinding(young(20), T)?.rule).toBe('volume-low');
    });

    it('lets ordinary swings pass', () => {
      expect(volumeFinding(young(180), T)).toBeNull();
      expect(volumeFinding(young(40), T)).toBeNull();
    });
  });

  describe('error rate', () => {
    it('flags a jump well above the previous 24 hours', () => {
      const finding = errorRateFinding(steadyKey({ recent: { requests: 40, errors: 20, unauthorized: 0 } }), T);
      expect(finding).toMatchObject({ rule: 'error-rate', numbers: { rate: 0.5, baselineRate: 0.02 } });
      expect(finding!.reason).toBe("50 % of the last 15 minutes' 40 requests failed, against 2 % over the 24 hours before.");
    });

    it('does not flag a key whose errors were always that high', () => {
      expect(
        errorRateFinding(steadyKey({ recent: { requests: 40, errors: 20, unauthorized: 0 }, before: { requests: 2400, errors: 1100 } }), T),
      ).toBeNull();
    });

    it('needs enough requests now and before', () => {
      expect(errorRateFinding(steadyKey({ recent: { requests: 10, errors: 10, unauthorized: 0 } }), T)).toBeNull();
      expect(
        errorRateFinding(steadyKey({ recent: { requests: 40, errors: 20, unauthorized: 0 }, before: { requests: 30, errors: 0 } }), T),
      ).toBeNull();
    });
  });

  describe('refused key', () => {
    it('flags a burst of 401s presenting a revoked, deleted or rotated-out key', () => {
      for (const refusal of ['revoked', 'deleted', 'rotated out'] as const) {
        const finding = refusedKeyFinding(steadyKey({ refusal, recent: { requests: 12, errors: 12, unauthorized: 12 } }), T);
        expect(finding).toMatchObject({ rule: 'refused-key', numbers: { unauthorized: 12, refusal } });
        expect(finding!.reason).toContain(`is ${refusal} but was presented 12 times`);
      }
    });

    it('ignores a few 401s, and 401s of a key that still works', () => {
      expect(refusedKeyFinding(steadyKey({ refusal: 'revoked', recent: { requests: 2, errors: 2, unauthorized: 2 } }), T)).toBeNull();
      expect(refusedKeyFinding(steadyKey({ recent: { requests: 30, errors: 30, unauthorized: 30 } }), T)).toBeNull();
    });
  });

  it('flags each country new for the key, with the subject telling them apart', () => {
    const findings = newCountryFindings(
      steadyKey({
        newCountries: [
          { country: 'BR', requests: 3 },
          { country: 'JP', requests: 1 },
        ],
      }),
      T,
    );
    expect(findings.map((f) => [f.rule, f.subject])).toEqual([
      ['new-country', 'BR'],
      ['new-country', 'JP'],
    ]);
    expect(findings[0]!.reason).toBe('First requests from BR for this key: 3 in the last 15 minutes.');
  });

  describe('quota forecast', () => {
    it.each([
      [0.7, null],
      [0.8, '2026-06:75'],
      [0.95, '2026-06:90'],
      [1.3, '2026-06:100'],
    ])('a forecast of %f of the quota raises %s', (share, subject) => {
      const finding = quotaFinding(steadyKey({ quota: quota({ forecastShare: share, forecast: share * 100_000 }) }), T);
      expect(finding?.subject ?? null).toBe(subject);
    });

    it('explains itself in words and numbers', () => {
      const finding = quotaFinding(steadyKey({ quota: quota({ forecastShare: 0.93, forecast: 93_000, used: 41_200 }) }), T);
      expect(finding!.reason).toBe(
        "At their recent pace the account's live keys will reach 93,000 requests by the end of 2026-06: 93 % of its 100,000 monthly quota (41,200 used so far; this key sends the most).",
      );
    });

    it('says nothing for a plan without a quota', () => {
      expect(quotaFinding(steadyKey({ quota: quota({ quota: null, usedShare: null, forecastShare: null }) }), T)).toBeNull();
    });
  });
});

describe('month-end forecast', () => {
  const now = Date.UTC(2026, 5, 11); // 10 days into June; 20 days left
  it('adds the recent rate over the time left to what is used', () => {
    // 7,000 requests over the last 7 days: 1,000 a day, 20 days left.
    expect(forecastMonthEnd({ used: 10_000, recent: 7000, recentSpanMs: 7 * 86_400_000, now })).toBe(30_000);
  });

  it('projects a key that started recently at its own pace, not spread over the whole span', () => {
    expect(forecastMonthEnd({ used: 2000, recent: 2000, recentSpanMs: 86_400_000, now })).toBe(42_000);
  });

  it('is what is used when nothing came recently', () => {
    expect(forecastMonthEnd({ used: 5000, recent: 0, recentSpanMs: 7 * 86_400_000, now })).toBe(5000);
  });
});
