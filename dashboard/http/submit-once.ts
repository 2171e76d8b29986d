import type { Request, Response } from 'express';
import { viewerOf } from '../auth/current-user';
import { FORM_TOKEN_FIELD, type FormTokens } from '../services/form-tokens.service';

/**
 * Runs a form's change once per its one-time token (the `_once` field) and the form's action
 * (method and path), and answers where the browser goes next: where the change led, or, for a
 * repeat, where the first submission led, marked as a repeat.
 */
export function submitOnce(
  formTokens: Pick<FormTokens, 'once'>,
  req: Request,
  res: Response,
  fallback: string,
  act: () => Promise<string>,
): Promise<string> {
  const token: unknown = (req.body as Record<string, unknown> | undefined)?.[FORM_TOKEN_FIELD];
  return formTokens.once(viewerOf(res).user.id, token, `${req.method} ${req.baseUrl}${req.path}`, fallback, act);
}

/** submitOnce, then a redirect (303) to where the browser goes next: a reload asks for that page, never resends the form. */
export async function submitOnceThenRedirect(
  formTokens: Pick<FormTokens, 'once'>,
  req: Request,
  res: Response,
  fallback: string,
  act: () => Promise<string>,
): Promise<void> {
  res.redirect(303, await submitOnce(formTokens, req, res, fallback, act));
}
