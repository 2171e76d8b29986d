import type { Request, Response } from 'express';
import { z } from 'zod';
import { environmentSchema } from '../../shared/domain/environment';
import { AppError } from '../../shared/errors/app-error';
import { TRAFFIC_WINDOWS, type TrafficWindow } from '../../shared/traffic/traffic-queries';
import { viewerOf } from '../auth/current-user';
import type { AccountKeys } from '../services/account-keys.service';
import type { TrafficChoice } from '../services/traffic.service';

export const WINDOW_CHOICES = Object.keys(TRAFFIC_WINDOWS) as TrafficWindow[];
export const DEFAULT_WINDOW: TrafficWindow = '24h';

const queryShape = z.object({
  window: z.enum(WINDOW_CHOICES, { error: `one of ${WINDOW_CHOICES.join(', ')}` }).default(DEFAULT_WINDOW),
  key: z.string().max(100).optional(),
});

/**
 * Reads `:env`, `?window=` and `?key=`. A bad window is a 400 naming the field; a key id of
 * another account or environment is "not found", like everywhere else on the dashboard.
 */
export async function chosenScope(accountKeys: AccountKeys, req: Request, res: Response): Promise<TrafficChoice> {
  const env = environmentSchema.safeParse(req.params.env);
  if (!env.success) throw new AppError('NOT_FOUND', `No page for environment "${String(req.params.env)}"; use test or live`);
  const query = queryShape.safeParse({ window: req.query.window || undefined, key: req.query.key || undefined });
  if (!query.success) {
    throw new AppError('VALIDATION_ERROR', 'The query has invalid parameters', {
      fields: query.error.issues.map((issue) => ({ field: issue.path.join('.'), message: issue.message })),
    });
  }
  const { account } = viewerOf(res);
  const keys = await accountKeys.inEnvironment(account.id, env.data);
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
