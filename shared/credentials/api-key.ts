import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { ENVIRONMENTS, type Environment } from '../domain/environment';
import { randomBase62 } from '../util/random-base62';

export const KEY_ID_LENGTH = 40;
/** `cos_sk_<env>_<id>`: env test|live, id ≥ 32 base62 characters. */
export const API_KEY_PATTERN = /^cos_sk_(test|live)_([0-9A-Za-z]{32,128})$/;

export const SCOPES = ['context', 'outcome', 'profile'] as const;
export const scopeSchema = z.enum(SCOPES);
export type Scope = z.infer<typeof scopeSchema>;

export function generateApiKey(environment: Environment): string {
  return `cos_sk_${environment}_${randomBase62(KEY_ID_LENGTH)}`;
}

export function parseApiKey(key: string): { environment: Environment } | null {
  const match = API_KEY_PATTERN.exec(key);
  if (!match || !ENVIRONMENTS.includes(match[1] as Environment)) return null;
  return { environment: match[1] as Environment };
}

/** Keys are stored only as HMAC-SHA-256 under the server secret. */
export function hashApiKey(key: string, secret: string): Buffer {
  return createHmac('sha256', secret).update(key).digest();
}

export function hashesEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

export const lastFour = (key: string): string => key.slice(-4);
