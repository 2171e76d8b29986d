import type { ApiKeyRecord } from './key.repository';

export type KeyStatus = 'active' | 'expiring' | 'expired' | 'revoked' | 'deleted';

/** A key's state as the API treats it at `now`: expiring keys still work, until expiresAt. */
export function keyStatus(key: ApiKeyRecord, now = Date.now()): KeyStatus {
  if (key.deletedAt) return 'deleted';
  if (key.revokedAt) return 'revoked';
  if (key.expiresAt && Date.parse(key.expiresAt) <= now) return 'expired';
  if (key.expiresAt) return 'expiring';
  return 'active';
}

/**
 * Whether a key takes one of its account's live-key places: a live key not revoked, deleted or
 * expired, and not rotating out (a rotation's new key takes its predecessor's place).
 * countLiveKeys (key.repository.ts) counts the same in SQL.
 */
export const holdsLiveKeyPlace = (key: ApiKeyRecord, now: number): boolean =>
  key.environment === 'live' && key.replacedBy === null && !['revoked', 'deleted', 'expired'].includes(keyStatus(key, now));
