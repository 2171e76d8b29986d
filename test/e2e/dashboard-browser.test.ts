import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../../scripts/chromium';
import { addUser, spawnDashboard, startDashboardInProcess } from '../support/dashboard';
import { eventually } from '../support/harness';
import { client, spawnApi, spawnBuilt, stop, type Spawned } from '../support/processes';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';
import { Secret, TOTP } from 'otpauth';
import { KeyService } from '../../shared/credentials/key.service';
import { Webhook } from 'standardwebhooks';
import { WebhookReceiver } from '../support/webhook-receiver';
import { findAccount } from '../../shared/accounts/account.repository';
import { SecretBox } from '../../shared/webhooks/secret-box';
import { WebhookEndpoints } from '../../shared/webhooks/webhook-endpoints.service';

/**
 * The dashboard in Debian's chromium, against the built dashboard, API and worker processes.
 * The API trusts loopback proxies, so X-Forwarded-For names the (public) client addresses whose
 * countries the geography page shows; the worker flushes traffic every second.
 */
let env: TestEnv;
let api: Spawned & { url: string };
let dashboard: Spawned & { url: string };
let worker: Spawned;
let browser: Browser;

beforeAll(async () => {
  env = await createTestEnv();
  await addUser(env.db, 'browser-acme', 'owner@browser.test', 'owner');
  // Webhook deliveries may reach the test's receiver on loopback, relayed within 100 ms.
  worker = spawnBuilt(
    'worker/main.js',
    env.processEnv({ USAGE_FLUSH_INTERVAL: '1s', WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1/32', WEBHOOK_RELAY_INTERVAL: '100ms' }),
  );
  [api, dashboard, browser] = await Promise.all([
    spawnApi(env.processEnv({ TRUST_PROXY: 'loopback' })),
    spawnDashboard(env.processEnv()),
    launchChromium(),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await Promise.all([api && stop(api), dashboard && stop(dashboard), worker && stop(worker)]);
  await env.close();
});

/** Client addresses in the United States, the United Kingdom and Japan. */
const CLIENTS = ['8.8.8.8', '81.2.69.160', '133.242.0.3'];

/** A context request as a client at `address` behind the API's (loopback) proxy. */
async function contextFrom(key: string, address: string): Promise<number> {
  const res = await fetch(`${api.url}/v1/context`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'X-Forwarded-For': address },
    body: JSON.stringify({ userId: 'browser-user', task: 'A task', complexity: 'medium' }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** Reloads `path` until `ready` finds what it waits for on the page (the worker flushes every second). */
async function reloadUntil(page: Page, path: string, ready: (page: Page) => Promise<boolean>): Promise<void> {
  await eventually(async () => {
    await page.goto(`${dashboard.url}${path}`);
    return ready(page);
  }, 20_000);
}

/** Tabs from the top of the page until `selector` has the focus; fails if it is never reached. */
async function tabTo(page: Page, selector: string, maxTabs = 60): Promise<void> {
  for (let i = 0; i < maxTabs; i++) {
    await page.keyboard.press('Tab');
    const focused = await page.locator(selector).evaluateAll((els) => els.some((el) => el === el.ownerDocument.activeElement));
    if (focused) return;
  }
  throw new Error(`keyboard navigation never reached ${selector}`);
}

/**
 * Inputs and selects a person fills in, with no label a screen reader can announce. Not those
 * `hidden`, as the invitation page's username for password managers.
 */
const unlabelled = (page: Page): Promise<string[]> =>
  page
    .locator('input:not([type=hidden]):not([hidden]), select:not([hidden])')
    .evaluateAll((els) =>
      els
        .filter((el) => (el.labels?.length ?? 0) === 0 && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby'))
        .map((el) => el.outerHTML),
    );

/** Wider than the viewport: the page would scroll sideways. */
const overflows = (page: Page): Promise<boolean> =>
  page.locator('html').evaluate((html) => html.scrollWidth > html.ownerDocument.defaultView.innerWidth);

const shownKey = (page: Page) => page.locator('#new-key').inputValue();

describe('dashboard in a browser', () => {
  let context: BrowserContext;
  beforeAll(async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: dashboard.url });
  });
  afterAll(() => context.close());

  it('signs in by keyboard, creates, rotates and revokes a key that the real API accepts, then refuses', async () => {
    const page = await context.newPage();
    await page.goto(`${dashboard.url}/signin`);
    expect(await unlabelled(page)).toEqual([]);
    await tabTo(page, '#email');
    await page.keyboard.type('owner@browser.test');
    await page.keyboard.press('Tab');
    await page.keyboard.type('a long enough password');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${dashboard.url}/keys/test`);

    await tabTo(page, '#key-name');
    expect(await unlabelled(page)).toEqual([]);
    await page.keyboard.type('browser key');
    await tabTo(page, 'form[action="/keys/test"] button[type=submit]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#new-key');
    const key = await shownKey(page);
    expect(key).toMatch(/^cos_sk_test_/);
    await page.getByRole('button', { name: 'Copy' }).click();
    const copied = await page.locator('html').evaluate((html) => html.ownerDocument.defaultView.navigator.clipboard.readText());
    expect(copied).toBe(key);
    expect((await client(api.url, key).context('browser-user')).status).toBe(200);

    // Traffic from three countries: 2 requests from each address, plus the one above (no proxy: loopback, unknown).
    for (const address of CLIENTS) for (let i = 0; i < 2; i++) expect(await contextFrom(key, address)).toBe(200);
    const keyId = await page.locator(`[data-key-last4="${key.slice(-4)}"]`).getAttribute('data-key-id');
    await reloadUntil(
      page,
      `/traffic/test?window=1h&key=${keyId}`,
      async (p) => (await p.locator('[data-stat="requests"] dd').textContent()) === '7',
    );
    expect(await page.locator('[data-stat="2xx"] dd').textContent()).toBe('7');
    expect(await page.locator('h2', { hasText: 'Per minute' }).isVisible()).toBe(true);
    expect(await page.locator('.chart.drawn canvas').count()).toBeGreaterThanOrEqual(4);
    // The legend names the point under the cursor in UTC, 24-hour.
    await page.locator('[data-chart="status"] .u-over').hover();
    expect(await page.locator('[data-chart="status"] .u-legend .u-series').first().locator('.u-value').textContent()).toMatch(
      /^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/,
    );
    await page.getByRole('rowheader', { name: 'context', exact: true }).waitFor();
    expect(await unlabelled(page)).toEqual([]);
    // The picker is a plain form: reachable and sent by keyboard.
    await tabTo(page, 'form.picker button');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${dashboard.url}/traffic/test?key=${keyId}&window=1h`);
    expect(await page.locator('[data-stat="requests"] dd').textContent()).toBe('7');

    await reloadUntil(page, '/geography/test?window=1h', async (p) => (await p.locator('table.countries tbody tr').count()) >= 3);
    const countries = await page.locator('table.countries tbody th').allTextContents();
    expect(countries).toEqual(expect.arrayContaining(['United States', 'United Kingdom', 'Japan']));
    expect(await page.locator('svg path[data-country="840"] title').textContent()).toBe('United States of America: 2 requests');
    await page.goto(`${dashboard.url}/keys/test`);

    await page.getByRole('button', { name: `Rotate browser key …${key.slice(-4)}` }).click();
    await page.waitForSelector('#new-key');
    const next = await shownKey(page);
    expect(next).not.toBe(key);
    await expect(page.getByText('rotating out until').count()).resolves.toBe(1);
    expect((await client(api.url, next).context('browser-user')).status).toBe(200);

    // While the old key rotates out, its traffic page shows both keys side by side.
    expect(await contextFrom(next, CLIENTS[0]!)).toBe(200);
    await reloadUntil(
      page,
      `/traffic/test?window=1h&key=${keyId}`,
      async (p) => (await p.locator('[data-section="rotation"] table.data tbody td').allTextContents()).join() === '7,2',
    );
    expect(await page.locator('[data-section="rotation"] .chart.drawn canvas').count()).toBe(1);

    await page.goto(`${dashboard.url}/keys/test`);
    expect(await unlabelled(page)).toEqual([]);
    // Revoking asks first, on a page naming the key.
    await page.getByRole('link', { name: `Revoke browser key …${next.slice(-4)}` }).click();
    await page.waitForURL(`${dashboard.url}/keys/test/*/revoke`);
    expect(await page.locator('h2#confirm-title').textContent()).toBe(`Revoke key “browser key” (…${next.slice(-4)})?`);
    expect(await unlabelled(page)).toEqual([]);
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText('Key revoked').waitFor();
    expect(page.url()).toBe(`${dashboard.url}/keys/test?done=revoked`);
    await eventually(async () => (await client(api.url, next).context('browser-user')).status === 401, 5000);
    // The rotated-out key keeps working through its grace period.
    expect((await client(api.url, key).context('browser-user')).status).toBe(200);

    await page.goto(`${dashboard.url}/audit`);
    const actions = await page.locator('tbody tr td:nth-child(3)').allTextContents();
    expect(actions.slice(0, 4)).toEqual(['Revoked a key', 'Rotated a key', 'Created a key', 'Signed in']);
  });

  it('creates one key for a double click on Create, shows it once, and not again on reload', async () => {
    const page = await context.newPage();
    await page.goto(`${dashboard.url}/keys/test`);
    await page.getByLabel('Name').fill('double clicked');
    const posts: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST') posts.push(request.url());
    });
    await page.locator('form[action="/keys/test"] button[type=submit]').dblclick();
    // Where the first click's creation outlasts the second's wait (a loaded machine), the page
    // says it is still being acted on, and a reload shows the key.
    const running = page.getByText('still being acted on');
    await page.locator('#new-key').or(running).waitFor();
    if (await running.count()) {
      expect(page.url()).toMatch(/\?again=running$/);
      await eventually(async () => {
        await page.reload();
        return (await page.locator('#new-key').count()) > 0;
      });
    }
    const key = await shownKey(page);
    expect(key).toMatch(/^cos_sk_test_/);
    expect(posts.length).toBeGreaterThanOrEqual(1);
    const created = await env.db.selectFrom('api_keys').select('id').where('name', '=', 'double clicked').execute();
    expect(created).toHaveLength(1);
    // The page after the redirect: a reload asks for it again, without the key and without a new one.
    await page.reload();
    expect(await page.locator('#new-key').count()).toBe(0);
    expect(await page.content()).not.toContain(key);
    expect(await env.db.selectFrom('api_keys').select('id').where('name', '=', 'double clicked').execute()).toHaveLength(1);
    await page.close();
  });

  it("acts once when the page's form reaches the dashboard twice at once (a double submit the browser did not stop)", async () => {
    const page = await context.newPage();
    await page.goto(`${dashboard.url}/keys/test`);
    await page.getByLabel('Name').fill('sent twice');
    // The form as the browser would send it, with its tokens, sent twice at once with the browser's cookies.
    const body = await page
      .locator('form[action="/keys/test"]')
      .evaluate((form: any) => new URLSearchParams(new form.ownerDocument.defaultView.FormData(form)).toString());
    const send = () =>
      context.request.post(`${dashboard.url}/keys/test`, {
        data: body,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: dashboard.url },
        maxRedirects: 0,
      });
    const answers = await Promise.all([send(), send()]);
    expect(answers.map((a) => a.status())).toEqual([303, 303]);
    expect(answers.map((a) => a.headers().location).sort()).toEqual(['/keys/test', '/keys/test?again=acted']);
    await page.goto(`${dashboard.url}/keys/test?again=acted`);
    expect(await shownKey(page)).toMatch(/^cos_sk_test_/);
    await page.getByText('This form was already sent').waitFor();
    expect(await env.db.selectFrom('api_keys').select('id').where('name', '=', 'sent twice').execute()).toHaveLength(1);
    await page.close();
  });

  it.each([
    ['desktop', 1280, 800],
    ['phone', 390, 844],
  ])('reads without sideways scrolling on a %s (%i × %i)', async (_name, width, height) => {
    const live = await new KeyService(env.db, TEST_SECRET).create({
      account: 'browser-acme',
      environment: 'live',
      name: 'a live key with a long name',
    });
    // An endpoint with a long URL and one delivery in its log.
    const endpoints = new WebhookEndpoints({ db: env.db, box: new SecretBox(TEST_SECRET) });
    const { endpoint } = await endpoints.add(
      {
        accountId: (await findAccount(env.db, 'browser-acme'))!.id,
        environment: 'test',
        url: `http://127.0.0.1:9/webhooks/areceiverpathwithnoplacetobreakevenonaphone${width}`,
        eventTypes: ['key.created', 'key.rotation_due'],
      },
      { name: 'operator (cli)', country: null },
    );
    await endpoints.sendTest({ accountId: endpoint.accountId, endpointId: endpoint.id }, { name: 'operator (cli)', country: null });
    const own = await browser.newContext({ viewport: { width, height } });
    const page = await own.newPage();
    await page.goto(`${dashboard.url}/signin`);
    expect(await overflows(page)).toBe(false);
    await page.getByLabel('Email').fill('owner@browser.test');
    await page.getByLabel('Password').fill('a long enough password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${dashboard.url}/keys/test`);
    const pages: [string, string][] = [
      ['/keys/test', 'Test keys'],
      ['/keys/live', 'Live keys'],
      [`/keys/live/${live.id}/revoke`, 'Revoke key'],
      ['/traffic/test', 'Traffic'],
      ['/traffic/live?window=30d', 'Traffic'],
      ['/geography/live', 'Geography'],
      ['/patterns', 'Unusual patterns'],
      ['/audit', 'Audit log'],
      ['/webhooks/test', 'Test webhooks'],
      [`/webhooks/test/${endpoint.id}`, 'Webhook endpoint (test)'],
      [`/webhooks/test/${endpoint.id}/rotate-secret`, 'Rotate signing secret'],
    ];
    for (const [path, heading] of pages) {
      // The page itself, not an error page or the sign-in form that would also fit the screen.
      const response = await page.goto(`${dashboard.url}${path}`);
      expect(response?.status()).toBe(200);
      expect(await page.locator('h1').textContent()).toBe(heading);
      expect(await overflows(page)).toBe(false);
    }
    await own.close();
  });
});

describe('two-factor sign-in in a browser, on a clock the test moves', () => {
  // This dashboard runs in the test's process and reads the test's clock: the codes, their
  // time-steps and the code step's limits follow `now`, not the machine's time.
  let now = Date.parse('2026-12-01T09:00:00.000Z');
  let tfa: { url: string; close: () => Promise<void> };
  beforeAll(async () => {
    tfa = await startDashboardInProcess(env, () => now);
  });
  afterAll(() => tfa?.close());

  it("enrols with the QR code shown and the secret typed; a code signs in once, the next step's code again", async () => {
    await addUser(env.db, 'browser-acme', 'tfa@browser.test', 'owner');
    const own = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await own.newPage();
    const signIn = async () => {
      await page.goto(`${tfa.url}/signin`);
      await page.getByLabel('Email').fill('tfa@browser.test');
      await page.getByLabel('Password').fill('a long enough password');
      await page.getByRole('button', { name: 'Sign in' }).click();
    };
    await signIn();
    await page.waitForURL(`${tfa.url}/keys/test`);
    await page.getByRole('link', { name: 'Your account' }).click();
    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
    // The QR code is drawn (an SVG of the server's, within the page's policy), and fits a phone.
    const qr = page.getByRole('img', { name: 'QR code of the two-factor secret' });
    expect((await qr.boundingBox())!.width).toBeGreaterThan(150);
    expect(await overflows(page)).toBe(false);
    const secret = (await page.locator('[data-secret]').textContent())!;
    const code = () => TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: now });
    // A code of half an hour ago does not turn it on.
    await page.getByLabel('Code from the app').fill(TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: now - 1_800_000 }));
    await page.getByRole('button', { name: 'Turn on two-factor sign-in' }).click();
    await page.getByText('That code is not right').waitFor();
    const enrolling = code();
    await page.getByLabel('Code from the app').fill(enrolling);
    await page.getByRole('button', { name: 'Turn on two-factor sign-in' }).click();
    await page.locator('[data-recovery-codes]').waitFor();
    expect(await page.locator('.recovery-codes li').count()).toBe(10);
    expect(await overflows(page)).toBe(false);
    // Shown once: a reload shows two-factor on, without the codes.
    await page.reload();
    expect(await page.locator('[data-recovery-codes]').count()).toBe(0);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${tfa.url}/signin`);

    // Within the same time-step, the enrolment's code does not sign in: a code is taken once.
    await signIn();
    await page.waitForURL(`${tfa.url}/signin/code`);
    const codeField = page.getByLabel('The 6-digit code from your authenticator app');
    await codeField.fill(enrolling);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByText('used already').waitFor();
    expect(page.url()).toBe(`${tfa.url}/signin/code`);
    // Thirty seconds later the app shows the next code, which does.
    now += 30_000;
    await codeField.fill(code());
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(`${tfa.url}/keys/test`);
    for (const path of ['/account/two-factor', '/account/password', '/account/sessions', '/account/team']) {
      expect((await page.goto(`${tfa.url}${path}`))?.status()).toBe(200);
      expect(await overflows(page)).toBe(false);
    }
    await own.close();
  });
});

/** A context of its own at desktop size, signed in as `email` (landing on the test keys). */
async function signedIn(email: string, options: { userAgent?: string } = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
  const page = await context.newPage();
  await page.goto(`${dashboard.url}/signin`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill('a long enough password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${dashboard.url}/keys/test`);
  return { context, page };
}

describe('the team in a browser', () => {
  it('invites a teammate by a link shown once, which signs them in with the invited role', async () => {
    await addUser(env.db, 'browser-acme', 'team-owner@browser.test', 'owner');
    const owner = await signedIn('team-owner@browser.test');
    await owner.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: dashboard.url });
    const page = owner.page;
    await page.goto(`${dashboard.url}/account/team`);
    expect(await unlabelled(page)).toEqual([]);
    await page.getByLabel('Email').fill('invitee@browser.test');
    await page.getByLabel('Role').selectOption('viewer');
    await page.getByRole('button', { name: 'Create an invitation link' }).click();
    await page.locator('[data-invitation-link]').waitFor();
    expect(page.url()).toBe(`${dashboard.url}/account/team`);
    const link = await page.locator('#invite-link').inputValue();
    expect(link).toMatch(new RegExp(`^${dashboard.url}/invite/[A-Za-z0-9_-]{20,}$`));
    await page.locator('[data-invitation-link]').getByRole('button', { name: 'Copy' }).click();
    const copied = await page.locator('html').evaluate((html) => html.ownerDocument.defaultView.navigator.clipboard.readText());
    expect(copied).toBe(link);

    // Shown once: a reload lists the invitation as waiting, without its link.
    await page.reload();
    expect(await page.locator('[data-invitation-link]').count()).toBe(0);
    expect(await page.content()).not.toContain(link);
    expect(await page.locator('tr[data-invitation="invitee@browser.test"]').count()).toBe(1);

    // The teammate, in a browser of their own, with only the link.
    const invitee = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const theirs = await invitee.newPage();
    await theirs.goto(copied);
    expect(await theirs.locator('h1').textContent()).toBe('Join browser-acme');
    expect(await unlabelled(theirs)).toEqual([]);
    expect(await overflows(theirs)).toBe(false);
    await theirs.getByLabel('Choose a password (at least 12 characters)').fill('the invitee chose this');
    await theirs.getByLabel('The password again').fill('the invitee chose this');
    await theirs.getByRole('button', { name: 'Join and sign in' }).click();
    await theirs.waitForURL(`${dashboard.url}/keys/test`);
    expect(await theirs.locator('.whoami span').textContent()).toMatch(/^invitee@browser\.test · viewer · /);
    // A viewer: the keys page has no create form.
    expect(await theirs.locator('form[action="/keys/test"]').count()).toBe(0);
    // The link is used up.
    expect((await theirs.goto(copied))?.status()).toBe(410);
    await invitee.close();

    await page.reload();
    expect(await page.locator('tr[data-invitation="invitee@browser.test"]').count()).toBe(0);
    expect(await page.locator('tr[data-member="invitee@browser.test"] td[data-label="Role"]').textContent()).toBe('viewer');

    // The member's actions can be seen (their text is not the colour of the page behind it) and used.
    const row = page.locator('tr[data-member="invitee@browser.test"]');
    for (const action of [
      row.getByRole('button', { name: 'Make owner' }),
      row.getByRole('link', { name: 'Remove invitee@browser.test' }),
    ]) {
      const colours = await action.evaluate((element) => {
        const view = element.ownerDocument.defaultView;
        const card = element.closest('table') ?? element.ownerDocument.body;
        return [view.getComputedStyle(element).color, view.getComputedStyle(card).backgroundColor];
      });
      expect(colours[0]).not.toBe('rgb(255, 255, 255)');
      expect(colours[0]).not.toBe(colours[1]);
    }
    await row.getByRole('button', { name: 'Make owner' }).click();
    await page.getByText('Role changed').waitFor();
    expect(await row.locator('td[data-label="Role"]').textContent()).toBe('owner');
    // Removing asks first, on a page naming them; Cancel leaves them in.
    await row.getByRole('link', { name: 'Remove invitee@browser.test' }).click();
    await page.getByRole('heading', { name: 'Remove invitee@browser.test from browser-acme?' }).waitFor();
    expect(await overflows(page)).toBe(false);
    await page.getByRole('link', { name: 'Cancel' }).click();
    await page.waitForURL(`${dashboard.url}/account/team`);
    await row.getByRole('link', { name: 'Remove invitee@browser.test' }).click();
    await page.getByRole('button', { name: 'Remove member' }).click();
    await page.waitForURL(`${dashboard.url}/account/team?done=removed`);
    expect(await page.locator('tr[data-member="invitee@browser.test"]').count()).toBe(0);
    await owner.context.close();
  });
});

describe('sessions in a browser', () => {
  it('lists both sessions, marks this one, and signs the other out everywhere else', async () => {
    await addUser(env.db, 'browser-acme', 'sessions@browser.test', 'viewer');
    const first = await signedIn('sessions@browser.test');
    const second = await signedIn('sessions@browser.test', {
      userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:140.0) Gecko/20100101 Firefox/140.0',
    });
    const page = first.page;
    await page.goto(`${dashboard.url}/account/sessions`);
    const rows = page.locator('table.data tbody tr');
    expect(await rows.count()).toBe(2);
    expect(await page.locator('tr[data-current]').count()).toBe(1);
    expect(await page.locator('tr[data-current] td:last-child').textContent()).toBe('this session');
    expect(await page.locator('tr[data-current] td[data-label="Browser"]').textContent()).toBe('Chrome on Linux');
    expect(await page.locator('tr:not([data-current]) td[data-label="Browser"]').textContent()).toBe('Firefox on Windows');

    await page.getByRole('button', { name: 'Sign out everywhere else (1)' }).click();
    await page.getByText('Your other sessions have ended.').waitFor();
    expect(page.url()).toBe(`${dashboard.url}/account/sessions?done=ended-others`);
    expect(await rows.count()).toBe(1);
    expect(await page.locator('tr[data-current]').count()).toBe(1);

    // The second browser's next page is the sign-in form; the first stays signed in.
    await second.page.goto(`${dashboard.url}/account/password`);
    expect(second.page.url()).toBe(`${dashboard.url}/signin?next=%2Faccount%2Fpassword`);
    expect(await second.page.getByRole('button', { name: 'Sign in' }).count()).toBe(1);
    expect((await page.goto(`${dashboard.url}/account/password`))?.status()).toBe(200);
    await Promise.all([first.context.close(), second.context.close()]);
  });
});

describe('webhooks in a browser', () => {
  const receiver = new WebhookReceiver();
  beforeAll(() => receiver.listen());
  afterAll(() => receiver.close());

  it('adds an endpoint whose secret is shown once, sends it a test event and shows the delivery in the log', async () => {
    await addUser(env.db, 'browser-acme', 'webhooks@browser.test', 'owner');
    const { context, page } = await signedIn('webhooks@browser.test');
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.waitForURL(`${dashboard.url}/webhooks/test`);
    expect((await page.locator('nav.tabs a[aria-current="page"]').textContent())?.trim()).toBe('Test');
    expect(await unlabelled(page)).toEqual([]);

    await page.getByLabel('URL').fill(receiver.url('/browser'));
    await page.locator('#add-key-created').check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.waitForSelector('#new-secret');
    const secret = await page.locator('#new-secret').inputValue();
    expect(secret).toMatch(/^whsec_/);
    expect(await overflows(page)).toBe(false);

    // Once: the reload shows the endpoint listed and the secret no more.
    await page.reload();
    expect(await page.locator('#new-secret').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
    const row = page.locator('tr[data-endpoint-id]', { hasText: receiver.url('/browser') });
    expect((await row.locator('td[data-label="Status"]').textContent())?.trim()).toBe('enabled');

    await row.getByRole('link', { name: receiver.url('/browser') }).click();
    await page.getByRole('heading', { name: 'Check and change' }).waitFor();
    expect(await unlabelled(page)).toEqual([]);
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await page.getByText('Test event sent').waitFor();
    expect((await page.locator('tr[data-delivery-id] code').first().textContent())?.trim()).toBe('webhook.test');
    const endpointPath = new URL(page.url()).pathname;

    // The worker delivers it, signed with the secret shown; the log then says so.
    await reloadUntil(page, endpointPath, async (p) => (await p.locator('tr[data-status="succeeded"]').count()) === 1);
    const delivered = page.locator('tr[data-status="succeeded"]');
    expect((await delivered.locator('td[data-label="Response"]').textContent())?.trim()).toBe('200');
    expect((await delivered.locator('td[data-label="Attempts"]').textContent())?.trim()).toBe('1');
    const [request] = receiver.received.filter((r) => r.path === '/browser');
    const webhookId = (await delivered.locator('td[data-label="webhook-id"]').textContent())?.trim();
    expect(request!.headers['webhook-id']).toBe(webhookId);
    expect(
      new Webhook(secret).verify(request!.body, {
        'webhook-id': request!.headers['webhook-id']!,
        'webhook-timestamp': request!.headers['webhook-timestamp']!,
        'webhook-signature': request!.headers['webhook-signature']!,
      }),
    ).toMatchObject({ type: 'webhook.test', environment: 'test' });
    expect(await overflows(page)).toBe(false);
    await context.close();
  });
});
