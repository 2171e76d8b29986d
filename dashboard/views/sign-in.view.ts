import { html } from './html';
import { csrfField, notice, page } from './layout';

/** `next`: the page to return to after signing in (already checked to be a path of this dashboard). */
export function signInPage(input: { csrfToken: string; email?: string; error?: string; next?: string }): string {
  return page({
    title: 'Sign in',
    body: html`${input.error ? notice('error', input.error) : ''}
      <form method="post" action="/signin" class="card narrow">
        ${csrfField(input.csrfToken)} ${input.next ? html`<input type="hidden" name="next" value="${input.next}" />` : ''}
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${input.email ?? ''}" />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required maxlength="256" />
        <button type="submit">Sign in</button>
      </form>
      <p class="hint">
        Accounts and users are created by your operator (<code>cos users create</code>). An API key is not a password here.
      </p>`,
  });
}

/** The second step of signing in with two-factor on: the code from the app, or a recovery code. */
export function signInCodePage(input: { csrfToken: string; error?: string }): string {
  return page({
    title: 'Two-factor code',
    body: html`${input.error ? notice('error', input.error) : ''}
      <form method="post" action="/signin/code" class="card narrow">
        ${csrfField(input.csrfToken)}
        <label for="code">The 6-digit code from your authenticator app</label>
        <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required maxlength="40" autofocus />
        <button type="submit">Continue</button>
      </form>
      <p class="hint">
        Lost your phone? Enter one of your recovery codes instead (each works once), or ask your operator to reset two-factor sign-in.
      </p>`,
  });
}
