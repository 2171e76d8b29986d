import { z } from 'zod';

/** The unusual-pattern rules (shared/traffic/patterns/rules.ts), named as stored and as webhooks carry them. */
export const PATTERN_RULES = ['volume-high', 'volume-low', 'error-rate', 'refused-key', 'new-country', 'quota-forecast'] as const;
export const patternRuleSchema = z.enum(PATTERN_RULES);
export type PatternRule = z.infer<typeof patternRuleSchema>;
