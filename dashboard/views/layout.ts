import type { Account } from '../../shared/accounts/account.repository';
import type { FailedSignIns } from '../../shared/audit/audit.repository';
import type { DashboardUser } from '../../shared/dashboard-users/user.repository';
import { formatTime } from './format';
import { html, type Html } from './html';

/**
 * One entry of the navigation bar. Pages added later register here; `section` is what a page
 * passes as `active` to highlight its entry.
 */
export interface NavItem {
  section: string;
  label: string;
  href: string;
  /** A number shown beside the label (e.g. open unusual patterns); nothing when 0. */
  count?: (viewer: Viewer) => number;
}

export const NAV_ITEMS: NavItem[] = [
  { section: 'keys-test', label: 'Test keys', href: '/keys/test' },
  { section: 'keys-live', label: 'Live keys', href: '/keys/live' },
  { section: 'traffic', label: 'Traffic', href: '/traffic/test' },
  { section: 'geography', label: 'Geography', href: '/geography/test' },
  { section: 'patterns', label: 'Unusual patterns', href: '/patterns', count: (viewer) => viewer.openPatterns },
  { section: 'webhooks', label: 'Webhooks', href: '/webhooks/test' },
  { section: 'audit', label: 'Audit log', href: '/audit' },
  { section: 'account', label: 'Your account', href: '/account/two-factor' },
];

/** Who is looking at a page, with what a form on it needs. */
export interface Viewer {
  user: DashboardUser;
  account: Account;
  csrfToken: string;
  /** This page's one-time form token: each of its forms acts once, however often it is sent. */
  formToken: string;
  /** The account's unacknowledged unusual patterns, for the navigation's badge. */
  openPatterns: number;
  /** Failed sign-ins on this user's email since their previous visit: told once, after signing in. */
  failedSignIns?: FailedSignIns;
  /** The account requires two-factor sign-in and this user has not set it up: only enrolment is open to them. */
  mustEnrol?: boolean;
  /** The account's owners require two-factor sign-in of every user. */
  requireTwoFactor?: boolean;
}

export interface PageOptions {
  title: string;
  /** The signed-in viewer; pages for anonymous visitors (sign-in, errors) leave it out. */
  viewer?: Viewer;
  active?: string;
  body: Html;
  /** Extra files from /assets/ this page needs (charts). */
  scripts?: string[];
  styles?: string[];
}

/** A hidden field carrying the session's CSRF token: every form that changes something has one. */
export const csrfField = (token: string): Html => html`<input type="hidden" name="_csrf" value="${token}" />`;

/** What a form that changes something carries: the CSRF token and the page's one-time token. */
export const formFields = (viewer: Viewer): Html =>
  html`${csrfField(viewer.csrfToken)}<input type="hidden" name="_once" value="${viewer.formToken}" />`;

/** Said on every page while the account is restricted: the API refuses its keys, and no key is issued. */
function restrictedBanner(): Html {
  return html`<div class="notice error banner" role="alert" data-notice="restricted">
    <strong>This account is restricted.</strong> The API refuses all its keys (403 ACCOUNT_RESTRICTED), and keys cannot be created or
    rotated until your operator lifts the restriction. Keys can still be revoked and deleted.
  </div>`;
}

function header(viewer: Viewer, active: string | undefined): Html {
  return html`<header class="topbar">
    <a class="brand" href="/">Context &amp; Outcome</a>
    <nav aria-label="Main">
      <ul>
        ${(viewer.mustEnrol ? NAV_ITEMS.filter((item) => item.section === 'account') : NAV_ITEMS).map((item) => {
          const count = item.count?.(viewer) ?? 0;
          return html`<li>
            <a href="${item.href}" ${item.section === active ? html` aria-current="page"` : ''}
              >${item.label}${count > 0 ? html` <span class="badge" data-badge="${item.section}">${count}<span class="visually-hidden"> open</span></span>` : ''}</a
            >
          </li>`;
        })}
      </ul>
    </nav>
    <div class="whoami">
      <span>${viewer.user.email} · ${viewer.user.role} · ${viewer.account.name} (${viewer.account.plan})</span>
      <form method="post" action="/signout">${csrfField(viewer.csrfToken)}<button type="submit" class="link">Sign out</button></form>
    </div>
  </header>`;
}

/** The whole document: every page goes through here, so headers, styles and scripts are in one place. */
export function page({ title, viewer, active, body, scripts = [], styles = [] }: PageOptions): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · Context &amp; Outcome dashboard</title>
        ${styles.map((name) => html`<link rel="stylesheet" href="/assets/${name}" />`)}
        <link rel="icon" href="/assets/favicon.svg" type="image/svg+xml" />
        <link rel="stylesheet" href="/assets/dashboard.css" />
        <script src="/assets/dashboard.js" defer></script>
        ${scripts.map((name) => html`<script src="/assets/${name}" defer></script>`)}
      </head>
      <body>
        <a class="skip" href="#main">Skip to content</a>
        ${viewer ? header(viewer, active) : html`<header class="topbar"><span class="brand">Context &amp; Outcome</span></header>`}
        <main id="main">
          ${viewer?.account.restricted ? restrictedBanner() : ''}
          <h1>${title}</h1>
          ${viewer?.failedSignIns ? failedSignInsNotice(viewer.failedSignIns) : ''} ${body}
        </main>
      </body>
    </html>`.text;
}

function failedSignInsNotice(failed: FailedSignIns): Html {
  const times = failed.count === 1 ? 'one failed sign-in' : `${failed.count} failed sign-ins`;
  const last = failed.lastAt ? `, the latest at ${formatTime(failed.lastAt)} from ${failed.lastCountry ?? 'an unknown country'}` : '';
  return html`<div class="notice info" role="status" data-notice="failed-sign-ins">
    Since your last visit there were ${times} with your email${last}. If that was not you, check the
    <a href="/audit">audit log</a> and consider a new password.
  </div>`;
}

/** A page's message, shown in a `notice` box. */
export type PageNotice = { kind: 'success' | 'error' | 'info'; text: string | Html };

/** A message box: `role=alert` for errors so screen readers announce it. */
export function notice(kind: PageNotice['kind'], text: PageNotice['text']): Html {
  return html`<div class="notice ${kind}" ${kind === 'error' ? html` role="alert"` : html` role="status"`}>${text}</div>`;
}
