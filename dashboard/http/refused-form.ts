import type { NextFunction, Request, Response } from 'express';
import { isAppError, type AppError } from '../../shared/errors/app-error';
import { html, type Html } from '../views/html';
import { fromFormParserError } from './form';

/** A refusal as people read it: its code, status and message, and each field at fault. */
export function refusalText(error: AppError): Html {
  const fields = (error.details as { fields?: { field: string; message: string }[] } | undefined)?.fields ?? [];
  return html`<strong>${error.code}</strong> (${error.statusCode}):
    ${error.message}${
      fields.length > 0
        ? html`<ul class="field-errors">
            ${fields.map((f) => html`<li>${f.field}: ${f.message}</li>`)}
          </ul>`
        : ''
    }`;
}

/**
 * A refused form (400, 403, 404, 413, 429…) of a signed-in user is answered with its page again
 * — `render` draws it with the refusal — under the refusal's status, so the form is at hand with
 * fresh tokens. JSON clients, requests without a viewer (401) and failures of ours go on to the
 * dashboard's error handler.
 */
export function refusedForm(render: (req: Request, res: Response, refusal: Html) => Promise<boolean>) {
  return async (error: unknown, req: Request, res: Response, next: NextFunction): Promise<void> => {
    const refusal = isAppError(error) ? error : fromFormParserError(error);
    const wantsHtml = req.accepts(['html', 'json']) === 'html';
    if (req.method !== 'POST' || !refusal || refusal.statusCode >= 500 || !res.locals.viewer || !wantsHtml || res.headersSent) {
      return next(error);
    }
    for (const [name, value] of Object.entries(refusal.headers ?? {})) res.setHeader(name, value);
    res.status(refusal.statusCode);
    if (!(await render(req, res, refusalText(refusal)))) {
      res.status(200);
      next(error);
    }
  };
}
