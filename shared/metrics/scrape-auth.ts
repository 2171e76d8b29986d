import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * Whether a request may read /metrics: always when no ADMIN_TOKEN is configured, otherwise only
 * with `Authorization: Bearer <ADMIN_TOKEN>` (compared in constant time).
 */
export function scrapeAuthorized(token: string | undefined, authorization: string | undefined): boolean {
  if (token === undefined) return true;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return match !== null && timingSafeEqual(digest(match[1]!), digest(token));
}

export const SCRAPE_UNAUTHORIZED_MESSAGE = 'Metrics require the admin token: send Authorization: Bearer <ADMIN_TOKEN>';
