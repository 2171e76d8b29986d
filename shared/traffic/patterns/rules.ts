import type { PatternRule } from '../../domain/pattern-rules';
import type { QuotaForecast } from '../quota-forecast';
import type { PatternThresholds } from './thresholds';

/** What the rules know about one key at one evaluation (built by pattern-data.ts). */
export interface KeyActivity {
  keyId: string;
  keyName: string;
  last4: string;
  /** Why the key is refused now, if it is. */
  refusal: 'revoked' | 'deleted' | 'rotated out' | null;
  /** Hours of traffic history: from the key's first recorded hour to the end of the last complete hour. */
  historyHours: number;
  /** Requests in the last complete hour, and its start (ms). */
  lastHour: number;
  lastHourAt: number;
  /** Requests in the same hour of day 1, 2, … days before (only days within the key's history). */
  sameHourPastDays: number[];
  /** Requests in each of the 24 hours before the last complete hour (only hours within its history). */
  previousHours: number[];
  /** The recent window: requests, errors (4xx but 429, and 5xx), 401s. */
  recent: { requests: number; errors: number; unauthorized: number };
  /** The 24 hours before the recent window. */
  before: { requests: number; errors: number };
  /** Countries of the recent window the key never had before. */
  newCountries: { country: string; requests: number }[];
  /** The account's month against its quota, on the key that contributes most to it (null on its other keys). */
  quota: QuotaForecast | null;
}

export type { PatternRule };

export interface Finding {
  rule: PatternRule;
  /** Tells two findings of one rule and key apart (a country, a quota level). */
  subject: string;
  reason: string;
  numbers: Record<string, number | string>;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const pct = (share: number) => `${Math.round(share * 100)} %`;
const hourLabel = (ms: number) => `${new Date(ms).toISOString().slice(11, 13)}:00 UTC`;

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Volume far above or below the key's own baseline for that hour of day. */
export function volumeFinding(key: KeyActivity, t: PatternThresholds): Finding | null {
  if (key.historyHours < t.minHistoryHours) return null;
  const current = key.lastHour;
  let baseline: number;
  let far: (direction: 1 | -1) => boolean;
  let basis: string;
  const numbers: Record<string, number | string> = { requests: current };
  if (key.sameHourPastDays.length >= t.robustMinDays) {
    baseline = median(key.sameHourPastDays);
    const mad = median(key.sameHourPastDays.map((value) => Math.abs(value - baseline)));
    const scale = Math.max(1.4826 * mad, Math.sqrt(baseline), 1);
    const score = (current - baseline) / scale;
    far = (direction) => direction * score >= t.volumeScore;
    basis = `the median of ${hourLabel(key.lastHourAt)} over the last ${key.sameHourPastDays.length} days`;
    Object.assign(numbers, { median: baseline, mad, score: Math.round(score * 10) / 10, days: key.sameHourPastDays.length });
  } else {
    if (key.previousHours.length === 0) return null;
    baseline = key.previousHours.reduce((sum, value) => sum + value, 0) / key.previousHours.length;
    far = (direction) => (direction > 0 ? current >= baseline * t.shortBaselineRatio : current * t.shortBaselineRatio <= baseline);
    basis = `the average hour of the previous ${key.previousHours.length} hours`;
    Object.assign(numbers, { mean: Math.round(baseline * 10) / 10, hours: key.previousHours.length });
  }
  const delta = current - baseline;
  const ratioOk = (direction: 1 | -1) => (direction > 0 ? current >= baseline * t.volumeMinRatio : current * t.volumeMinRatio <= baseline);
  for (const direction of [1, -1] as const) {
    if (far(direction) && direction * delta >= t.volumeMinDelta && ratioOk(direction)) {
      const word = direction > 0 ? 'above' : 'below';
      return {
        rule: direction > 0 ? 'volume-high' : 'volume-low',
        subject: '',
        reason: `${fmt(current)} requests in the hour from ${hourLabel(key.lastHourAt)}, far ${word} ${basis} (${fmt(baseline)}).`,
        numbers,
      };
    }
  }
  return null;
}

/** The recent error rate jumps well above the previous 24 hours'. */
export function errorRateFinding(key: KeyActivity, t: PatternThresholds): Finding | null {
  const { recent, before } = key;
  if (recent.requests < t.errorMinRequests || before.requests < t.errorMinBaselineRequests) return null;
  const rate = recent.errors / recent.requests;
  const baseline = before.errors / before.requests;
  if (rate < baseline + t.errorRateJump || rate < 2 * baseline) return null;
  return {
    rule: 'error-rate',
    subject: '',
    reason: `${pct(rate)} of the last ${t.windowMinutes} minutes' ${fmt(recent.requests)} requests failed, against ${pct(baseline)} over the 24 hours before.`,
    numbers: {
      requests: recent.requests,
      errors: recent.errors,
      rate,
      baselineRequests: before.requests,
      baselineErrors: before.errors,
      baselineRate: baseline,
    },
  };
}

/** 401s presenting a key that is revoked, deleted or past its rotation grace. */
export function refusedKeyFinding(key: KeyActivity, t: PatternThresholds): Finding | null {
  if (!key.refusal || key.recent.unauthorized < t.refusedKeyBurst) return null;
  return {
    rule: 'refused-key',
    subject: '',
    reason:
      `Key "${key.keyName}" (…${key.last4}) is ${key.refusal} but was presented ${fmt(key.recent.unauthorized)} times in the last ` +
      `${t.windowMinutes} minutes: a deployment still uses it, or it has leaked.`,
    numbers: { unauthorized: key.recent.unauthorized, minutes: t.windowMinutes, refusal: key.refusal },
  };
}

/** First traffic from a country the key never had before. */
export function newCountryFindings(key: KeyActivity, t: PatternThresholds): Finding[] {
  if (key.historyHours < t.minHistoryHours) return [];
  return key.newCountries
    .filter((entry) => entry.requests >= t.newCountryMinRequests)
    .map((entry) => ({
      rule: 'new-country' as const,
      subject: entry.country,
      reason: `First requests from ${entry.country} for this key: ${fmt(entry.requests)} in the last ${t.windowMinutes} minutes.`,
      numbers: { country: entry.country, requests: entry.requests, historyHours: Math.floor(key.historyHours) },
    }));
}

/**
 * The account's month-end forecast crosses 75, 90 or 100 % of its quota (the highest level
 * crossed); reported on the key that contributes most, once per account.
 */
export function quotaFinding(key: KeyActivity, t: PatternThresholds): Finding | null {
  const forecast = key.quota;
  if (!forecast?.quota || forecast.forecastShare === null || forecast.usedShare === null) return null;
  const settled = key.historyHours >= t.minHistoryHours;
  const level = [...t.quotaLevels]
    .sort((a, b) => b - a)
    .find((candidate) => forecast.forecastShare! >= candidate && (settled || forecast.usedShare! >= candidate));
  if (level === undefined) return null;
  return {
    rule: 'quota-forecast',
    subject: `${forecast.month}:${Math.round(level * 100)}`,
    reason:
      `At their recent pace the account's live keys will reach ${fmt(forecast.forecast)} requests by the end of ${forecast.month}: ` +
      `${pct(forecast.forecastShare)} of its ${fmt(forecast.quota)} monthly quota (${fmt(forecast.used)} used so far; this key sends the most).`,
    numbers: { used: forecast.used, forecast: forecast.forecast, quota: forecast.quota, level, forecastShare: forecast.forecastShare },
  };
}

/** Every rule on one key. */
export function evaluateKey(key: KeyActivity, t: PatternThresholds): Finding[] {
  return [volumeFinding(key, t), errorRateFinding(key, t), refusedKeyFinding(key, t), quotaFinding(key, t)]
    .filter((finding): finding is Finding => finding !== null)
    .concat(newCountryFindings(key, t));
}
