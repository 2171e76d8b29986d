import type { AppError } from '../../shared/errors/app-error';
import { html } from './html';
import { notice, page, type Viewer } from './layout';

/** A failure as a page: the contract's code and message, and a way back. */
export function errorPage(error: AppError, viewer?: Viewer): string {
  return page({
    title: error.statusCode === 404 ? 'Not found' : error.statusCode >= 500 ? 'Something went wrong' : 'Request refused',
    viewer,
    body: html`${notice('error', html`<strong>${error.code}</strong> (${error.statusCode}): ${error.message}`)}
      <p><a href="${viewer ? '/keys/test' : '/signin'}">Back to the dashboard</a></p>`,
  });
}
