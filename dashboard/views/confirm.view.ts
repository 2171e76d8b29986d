import { html, type Html } from './html';
import { formFields, page, type Viewer } from './layout';

/** A change that asks first, on a page of its own (no script): what it acts on, what it does, and a way back. */
export interface ConfirmPageInput {
  viewer: Viewer;
  /** The navigation entry the page belongs to. */
  active: string;
  /** Names the change for tests and styles (`data-confirm`). */
  action: string;
  title: string;
  /** The question, naming what the change acts on. */
  question: string | Html;
  /** What identifies the thing acted on, as label and value. */
  facts: ReadonlyArray<readonly [string, string | Html]>;
  /** What the change does. */
  effect: string | Html;
  /** Where the form posts. */
  formAction: string;
  button: string;
  danger: boolean;
  cancel: string;
}

export function confirmPage(input: ConfirmPageInput): string {
  const { viewer } = input;
  return page({
    title: input.title,
    viewer,
    active: input.active,
    body: html`<section class="card narrow confirm" aria-labelledby="confirm-title" data-confirm="${input.action}">
      <h2 id="confirm-title">${input.question}</h2>
      <dl class="key-facts">
        ${input.facts.map(
          ([label, value]) =>
            html`<dt>${label}</dt>
              <dd>${value}</dd>`,
        )}
      </dl>
      <p>${input.effect}</p>
      <form method="post" action="${input.formAction}" class="stack">
        ${formFields(viewer)}
        <div class="button-row">
          <button type="submit" ${input.danger ? html` class="danger"` : ''}>${input.button}</button>
          <a class="button secondary" href="${input.cancel}">Cancel</a>
        </div>
      </form>
    </section>`,
  });
}
