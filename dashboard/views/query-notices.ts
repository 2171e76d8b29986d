import type { RepeatState } from '../services/form-tokens.service';
import { html } from './html';
import type { PageNotice } from './layout';

const SAID: Record<RepeatState, string> = {
  acted: 'This form was already sent: it was acted on once, and nothing was done again.',
  running:
    'This form was already sent and is still being acted on; nothing was done twice. Reload this page in a moment to see what it did.',
};

/**
 * The message of a page reached by a repeated form: the first submission's own message (if the
 * page has one), followed by what the repeat did — nothing. A page that shows the first's
 * message (a reload of a `running` page, once it finished) says it acted.
 */
export function withRepeatNotice(repeat: RepeatState | undefined, message?: PageNotice): PageNotice | undefined {
  if (!repeat) return message;
  return message ? { kind: message.kind, text: html`${message.text} ${SAID.acted}` } : { kind: 'info', text: SAID[repeat] };
}

/** The message a page's `?done=` names among its own `messages`; nothing for any other value (`constructor` included). */
export function doneText(query: Record<string, unknown>, messages: Readonly<Record<string, string>>): string | undefined {
  const done = query.done;
  return typeof done === 'string' && Object.hasOwn(messages, done) ? messages[done] : undefined;
}
