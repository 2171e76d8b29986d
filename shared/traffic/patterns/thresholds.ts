/**
 * Every threshold of the unusual-pattern rules, in one place (docs/OPERATIONS.md, "Unusual
 * patterns"). Rules read them from here; tests pass their own to probe the edges.
 */
export const PATTERN_THRESHOLDS = {
  /** The job looks at the last complete minutes, this many (recent requests, errors, 401s, countries). */
  windowMinutes: 15,
  /** A key needs this much traffic history (hours since its first request) before any volume, country or quota alarm. */
  minHistoryHours: 24,
  /** Volume: past days whose same hour of day form the robust baseline… */
  baselineDays: 28,
  /** …which is used once at least this many such days exist; before that, the mean of the previous 24 hours. */
  robustMinDays: 7,
  /** Robust score |hour − median| / max(1.4826 × MAD, √median, 1) needed for a volume alarm. */
  volumeScore: 6,
  /** With the short baseline, the hour must be this many times above (or below, divided) the mean. */
  shortBaselineRatio: 4,
  /** And in either case differ from the baseline by at least this many requests, and by a factor of 2. */
  volumeMinDelta: 50,
  volumeMinRatio: 2,
  /** Error rate (4xx other than 429, and 5xx): recent requests needed, and previous-24-hour requests needed. */
  errorMinRequests: 20,
  errorMinBaselineRequests: 50,
  /** The recent error rate must exceed the previous 24 hours' by this much (absolute) and be at least twice it. */
  errorRateJump: 0.2,
  /** 401s presenting a revoked, deleted or rotated-out key within the window that make a burst. */
  refusedKeyBurst: 5,
  /** Requests from a country the key never had before that raise an alarm. */
  newCountryMinRequests: 1,
  /** Shares of the monthly quota the month-end forecast is checked against. */
  quotaLevels: [0.75, 0.9, 1],
  /** An alarm seen again within this long continues (last seen moves), acknowledged or not; later, it is a new one. */
  continuationMs: 2 * 3_600_000,
};

export type PatternThresholds = typeof PATTERN_THRESHOLDS;
