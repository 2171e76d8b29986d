import type { Request, Response } from 'express';
import { z } from 'zod';
import type { Db } from '../../shared/db/database';
import { environmentSchema, type Environment } from '../../shared/domain/environment';
import { AppError } from '../../shared/errors/app-error';
import { listKeys, type ApiKeyRecord } from '../../shared/credentials/key.repository';
import { keyStatus } from '../../shared/credentials/key-status';
import { TRAFFIC_WINDOWS, type TrafficScope, type TrafficWindow } from '../../shared/traffic/traffic-queries';
import { viewerOf } from '../auth/current-user';

export const WINDOW_CHOICES = Object.keys(TRAFFIC_WINDOWS) as TrafficWindow[];
export const DEFAULT_WINDOW: TrafficWindow = '24h';

const queryShape = z.object({
  window: z.enum(WINDOW_CHOICES, { error: `one of ${WINDOW_CHOICES.join(', ')}` }).default(DEFAULT_WINDOW),
  key: z.string().max(100).optional(),
});

/** What a traffic or geography page shows: one environment, one window, the account or one key. */
export interface ChosenScope {
  environment: Environment;
  window: TrafficWindow;
  /** The environment's keys (not deleted), for the picker. */
  keys: ApiKeyRecord[];
  /** The chosen key; undefined for the whole account. */
  key?: ApiKeyRecord;
  scope: TrafficScope;
}

/**
 * Reads `:env`, `?window=` and `?key=`. A bad window is a 400 naming the field; a key id of
 * another account or environment is "not found", like everywhere else on the dashboard.
 */
export async function chosenScope(db: Db, req: Request, res: Response): Promise<ChosenScope> {
  const env = environmentSchema.safeParse(req.params.env);
  if (!env.success) throw new AppError('NOT_FOUND', `No page for environment "${String(req.params.env)}"; use test or live`);
  const query = queryShape.safeParse({ window: req.query.window || undefined, key: req.query.key || undefined });
  if (!query.success) {
    throw new AppError('VALIDATION_ERROR', 'The query has invalid parameters', {
      fields: query.error.issues.map((issue) => ({ field: issue.path.join('.'), message: issue.message })),
    });
  }
  const { account } = viewerOf(res);
  const keys = (await listKeys(db, account.id)).filter((k) => k.environment === env.data);
  const key = query.data.key === undefined ? undefined : keys.find((k) => k.id === query.data.key);
  if (query.data.key !== undefined && !key) throw new AppError('NOT_FOUND', 'No such key in this account and environment');
  return {
    environment: env.data,
    window: query.data.window,
    keys,
    key,
    scope: { accountId: account.id, environment: env.data, keyId: key?.id },
  };
}

/**
 * The other key of a rotation still in its grace period: the key that replaced `key` while
 * `key` rotates out, or the key `key` replaced while that one rotates out.
 */
export function rotationPartner(key: ApiKeyRecord, keys: ApiKeyRecord[], now: number): { old: ApiKeyRecord; next: ApiKeyRecord } | null {
  if (keyStatus(key, now) === 'expiring' && key.replacedBy) {
    const next = keys.find((k) => k.id === key.replacedBy);
    return next ? { old: key, next } : null;
  }
  const old = keys.find((k) => k.replacedBy === key.id && keyStatus(k, now) === 'expiring');
  return old ? { old, next: key } : null;
}
