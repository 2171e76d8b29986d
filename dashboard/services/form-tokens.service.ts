import { createHash, randomBytes } from 'node:crypto';
import { AppError } from '../../shared/errors/app-error';
import type { FormTokenRef, FormTokenRepository } from '../forms/form-token.repository';

/** The hidden field that carries a form's one-time token. */
export const FORM_TOKEN_FIELD = '_once';
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{22,64}$/;

/**
 * What a repeat found in `?again=` of the page it is sent to: the first submission had acted
 * (`acted`), or was still acting when the repeat stopped waiting for it (`running`).
 */
export type RepeatState = 'acted' | 'running';
/** The query parameter that tells a page it was reached by a repeat. */
export const REPEAT_PARAM = 'again';

/**
 * Makes a form's submission happen once: a reload, a double click or the back button resends
 * the same token, and only its first submission acts. The token is not a secret (the CSRF token
 * proves where the form came from); it names one rendering of a page, and with the form's
 * action (method and path) one submission.
 */
export class FormTokens {
  constructor(
    private readonly store: Pick<FormTokenRepository, 'claim' | 'complete' | 'release' | 'outcome'>,
    /**
     * How long a repeat waits for the first submission to finish (a double click arrives while
     * it runs): a little less than a page's deadline, so the repeat is answered in time.
     */
    private readonly wait: { pollMs: number; maxMs: number },
  ) {}

  /** Waits as long as a page may take, less `marginMs` to answer in. */
  static waitWithin(requestDeadlineMs: number, marginMs = 250): { pollMs: number; maxMs: number } {
    return { pollMs: 50, maxMs: Math.max(0, requestDeadlineMs - marginMs) };
  }

  /** A new token for a page's forms. */
  static issue(): string {
    return randomBytes(16).toString('base64url');
  }

  /**
   * Runs `act` (which answers where the browser goes next) for the first submission of `token`
   * to `action` and answers where it led; a later one runs nothing and is sent where the first
   * led, or to `fallback` while the first has not finished — each marked as a repeat (see
   * `repeatState`). A refusal (`act` throws) frees the token.
   */
  async once(userId: string, token: unknown, action: string, fallback: string, act: () => Promise<string>): Promise<string> {
    if (typeof token !== 'string' || !TOKEN_PATTERN.test(token)) {
      throw new AppError('VALIDATION_ERROR', 'The form is missing its one-time token; reload the page and send it again', {
        fields: [{ field: FORM_TOKEN_FIELD, message: 'missing or malformed' }],
      });
    }
    const stored: FormTokenRef = { userId, digest: createHash('sha256').update(`${token} ${action}`).digest('base64url') };
    if (await this.store.claim(stored)) {
      let location: string;
      try {
        location = await act();
      } catch (error) {
        await this.store.release(stored).catch(() => undefined);
        throw error;
      }
      await this.store.complete(stored, location);
      return location;
    }
    const deadline = Date.now() + this.wait.maxMs;
    for (;;) {
      const location = await this.store.outcome(stored);
      if (location !== null) return markRepeat(location, 'acted');
      if (Date.now() >= deadline) return markRepeat(fallback, 'running');
      await new Promise((resolve) => setTimeout(resolve, this.wait.pollMs));
    }
  }
}

/** `location` with `again=<state>`: the page then says the form was already sent and nothing was done twice. */
function markRepeat(location: string, state: RepeatState): string {
  const url = new URL(location, 'http://dashboard.invalid');
  url.searchParams.set(REPEAT_PARAM, state);
  return `${url.pathname}${url.search}`;
}

/** How a page was reached by a repeated form, read from its query; undefined when it was not. */
export function repeatState(query: Record<string, unknown>): RepeatState | undefined {
  const value = query[REPEAT_PARAM];
  return value === 'acted' || value === 'running' ? value : undefined;
}
