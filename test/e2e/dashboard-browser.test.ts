import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../../scripts/chromium';
import { addUser, spawnDashboard } from '../support/dashboard';
import { eventually } from '../support/harness';
import { client, spawnApi, stop, type Spawned } from '../support/processes';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';
import { KeyService } from '../../shared/keys/key.service';

/** The dashboard in Debian's chromium, against the built dashboard and API processes. */
let env: TestEnv;
let api: Spawned & { url: string };
let dashboard: Spawned & { url: string };
let browser: Browser;

beforeAll(async () => {
  env = await createTestEnv();
  await addUser(env.db, 'browser-acme', 'owner@browser.test', 'owner');
  [api, dashboard, browser] = await Promise.all([spawnApi(env.processEnv()), spawnDashboard(env.processEnv()), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
  await Promise.all([api && stop(api), dashboard && stop(dashboard)]);
  await env.close();
});

/** Tabs from the top of the page until `selector` has the focus; fails if it is never reached. */
async function tabTo(page: Page, selector: string, maxTabs = 60): Promise<void> {
  for (let i = 0; i < maxTabs; i++) {
    await page.keyboard.press('Tab');
    const focused = await page.locator(selector).evaluateAll((els) => els.some((el) => el === el.ownerDocument.activeElement));
    if (focused) return;
  }
  throw new Error(`keyboard navigation never reached ${selector}`);
}

/** Inputs and selects a person fills in, with no label a screen reader can announce. */
const unlabelled = (page: Page): Promise<string[]> =>
  page
    .locator('input:not([type=hidden]), select')
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

    await page.getByRole('button', { name: `Rotate browser key …${key.slice(-4)}` }).click();
    await page.waitForSelector('#new-key');
    const next = await shownKey(page);
    expect(next).not.toBe(key);
    await expect(page.getByText('rotating out until').count()).resolves.toBe(1);
    expect((await client(api.url, next).context('browser-user')).status).toBe(200);

    await page.goto(`${dashboard.url}/keys/test`);
    expect(await unlabelled(page)).toEqual([]);
    await page.getByRole('button', { name: `Revoke browser key …${next.slice(-4)}` }).click();
    await page.getByText('Key revoked').waitFor();
    await eventually(async () => (await client(api.url, next).context('browser-user')).status === 401, 5000);
    // The rotated-out key keeps working through its grace period.
    expect((await client(api.url, key).context('browser-user')).status).toBe(200);

    await page.goto(`${dashboard.url}/audit`);
    const actions = await page.locator('tbody tr td:nth-child(3)').allTextContents();
    expect(actions.slice(0, 4)).toEqual(['Revoked a key', 'Rotated a key', 'Created a key', 'Signed in']);
  });

  it.each([
    ['desktop', 1280, 800],
    ['phone', 390, 844],
  ])('reads without sideways scrolling on a %s (%i × %i)', async (_name, width, height) => {
    await new KeyService(env.db, TEST_SECRET).create({ account: 'browser-acme', environment: 'live', name: 'a live key with a long name' });
    const own = await browser.newContext({ viewport: { width, height } });
    const page = await own.newPage();
    await page.goto(`${dashboard.url}/signin`);
    expect(await overflows(page)).toBe(false);
    await page.getByLabel('Email').fill('owner@browser.test');
    await page.getByLabel('Password').fill('a long enough password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${dashboard.url}/keys/test`);
    for (const path of ['/keys/test', '/keys/live', '/audit']) {
      await page.goto(`${dashboard.url}${path}`);
      expect(await overflows(page)).toBe(false);
      expect(await page.locator('h1').isVisible()).toBe(true);
    }
    await own.close();
  });
});
