import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { projectRoot } from '../shared/config/dev-env';
import { createDb, DB_ROLES } from '../shared/db/database';
import { migrateToLatest } from '../shared/db/migrator';
import { launchChromium } from './chromium';
import { freePort, startLocalServices } from './local-services';
import { Redis } from 'ioredis';
import { redisKeys } from '../shared/redis/key-names';
import { flushTraffic } from '../shared/traffic/traffic-flush';
import { trafficSeries } from '../shared/traffic/traffic-queries';
import { SCREENSHOT_PASSWORD, seedScreenshotAccount, type ScreenshotAccount } from './screenshots-seed';
import { driveTraffic, seedPatterns, seedTrafficHistory } from './screenshots-traffic';

/**
 * `npm run screenshots`: the dashboard's pages at 1280 × 800 and 390 × 844, saved to docs/img/
 * for the README. Runs on a throwaway Postgres and Redis with a seeded account, so the pictures
 * are the same on every machine but for dates and generated keys.
 */
const root = projectRoot();
const OUT = path.join(root, 'docs', 'img');
const SECRET = 'screenshots-secret-0123456789';
const VIEWPORTS = [
  { name: 'desktop', size: { width: 1280, height: 800 }, userAgent: undefined, invitee: 'alex@acme.example', role: 'owner' },
  // A phone's browser, so the sessions page tells it apart from the desktop's.
  {
    name: 'phone',
    size: { width: 390, height: 844 },
    userAgent: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Mobile Safari/537.36',
    invitee: 'kim@acme.example',
    role: 'viewer',
  },
] as const;

async function waitFor(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer`);
}

async function signIn(page: Page, url: string, email: string): Promise<void> {
  await page.goto(`${url}/signin`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(SCREENSHOT_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${url}/keys/test`);
}

async function shoot(browser: Browser, url: string, users: ScreenshotAccount): Promise<string[]> {
  const saved: string[] = [];
  // Another session of the owner's, on a laptop elsewhere, for the sessions page to list.
  const laptop = await browser.newContext({
    userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:140.0) Gecko/20100101 Firefox/140.0',
    extraHTTPHeaders: { 'X-Forwarded-For': '193.0.6.139' },
  });
  await signIn(await laptop.newPage(), url, users.owner);
  await laptop.close();
  const today = new Date().toISOString().slice(0, 10);
  for (const viewport of VIEWPORTS) {
    // The audit log shows the country of these (documentation) addresses.
    const context = await browser.newContext({
      viewport: viewport.size,
      userAgent: viewport.userAgent,
      extraHTTPHeaders: { 'X-Forwarded-For': '81.2.69.160' },
    });
    const page = await context.newPage();
    const save = async (name: string) => {
      const file = path.join(OUT, `dashboard-${name}-${viewport.name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      saved.push(path.relative(root, file));
    };
    await page.goto(`${url}/signin`);
    await save('sign-in');
    await signIn(page, url, users.owner);
    // Creating answers 303 to the keys page, which shows the new key this once.
    const name = `ci ${viewport.name}`;
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.waitForSelector('#new-key');
    const created = await page.locator('#new-key').inputValue();
    await save('key-created');
    // Revoking asks first, on a page of its own; its button acts and redirects back to the list.
    await page.getByRole('link', { name: `Revoke ${name} …${created.slice(-4)}` }).click();
    await page.waitForURL(/\/keys\/test\/[^/]+\/revoke$/);
    const keyId = /\/keys\/test\/([^/]+)\/revoke$/.exec(page.url())![1]!;
    await save('revoke-confirm');
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await page.waitForURL(`${url}/keys/test?done=revoked`);
    await page.goto(`${url}/keys/live`);
    await save('keys-live');
    await page.goto(`${url}/traffic/live?window=24h`);
    await page.waitForSelector('.chart.drawn');
    await save('traffic');
    await page.goto(`${url}/traffic/live?window=24h&key=${users.keys.productionOld.id}`);
    await page.waitForSelector('[data-section="rotation"] .chart.drawn');
    await save('traffic-rotation');
    await page.goto(`${url}/geography/live?window=30d`);
    await save('geography');
    await page.goto(`${url}/patterns`);
    await save('patterns');
    // An enrolment begun and not confirmed: the QR code, while the owner's sign-in stays one step.
    await page.goto(`${url}/account/two-factor`);
    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
    await page.getByRole('img', { name: 'QR code of the two-factor secret' }).waitFor();
    await save('two-factor');
    await page.goto(`${url}/account/sessions`);
    await save('sessions');
    await page.goto(`${url}/account/team`);
    await page.getByLabel('Email', { exact: true }).fill(viewport.invitee);
    await page.getByLabel('Role', { exact: true }).selectOption(viewport.role);
    await page.getByRole('button', { name: 'Create an invitation link' }).click();
    await page.waitForSelector('[data-invitation-link]');
    await save('team');
    // Removing a member asks first, naming them; Cancel leaves them in.
    await page.getByRole('link', { name: 'Remove sam@acme.example' }).click();
    await page.waitForURL(/\/account\/team\/members\/[^/]+\/remove$/);
    await save('remove-member-confirm');
    await page.getByRole('link', { name: 'Cancel' }).click();
    // A webhook endpoint added: its signing secret shown once, then its own page.
    await page.goto(`${url}/webhooks/test`);
    const hook = `https://hooks.acme.example/cos/${viewport.name}`;
    await page.getByLabel('URL').fill(hook);
    await page.locator('#add-key-created').check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.waitForSelector('#new-secret');
    await save('webhook-added');
    await page.reload();
    await page.getByRole('link', { name: hook }).click();
    await page.getByRole('heading', { name: 'Check and change' }).waitFor();
    await save('webhook-endpoint');
    await page.goto(`${url}/audit`);
    await save('audit');
    // One key's history today, chosen in the filter form as a person would.
    await page.getByLabel('Key', { exact: true }).selectOption(keyId);
    await page.getByLabel('From (UTC)').fill(today);
    await page.getByLabel('To (UTC, included)').fill(today);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/\/audit\?/);
    await save('audit-filtered');
    await context.close();
  }
  const context = await browser.newContext({ viewport: VIEWPORTS[0].size, extraHTTPHeaders: { 'X-Forwarded-For': '193.0.6.139' } });
  const page = await context.newPage();
  await signIn(page, url, users.viewer);
  await page.screenshot({ path: path.join(OUT, 'dashboard-viewer-desktop.png'), fullPage: true });
  saved.push('docs/img/dashboard-viewer-desktop.png');
  await context.close();
  return saved;
}

/** A month of recorded history, then real requests from several addresses, flushed before the pictures. */
async function addTraffic(db: ReturnType<typeof createDb>, redis: Redis, users: ScreenshotAccount, apiUrl: string): Promise<void> {
  const keys = redisKeys('cos');
  await seedTrafficHistory(redis, keys, db, users, Date.now());
  await seedPatterns(db, users, Date.now());
  const scope = { accountId: users.accountId, environment: 'test' as const, keyId: users.keys.checkout.id };
  const counted = async () => (await trafficSeries(db, scope, '1h', Date.now())).points.reduce((sum, p) => sum + p.requests, 0);
  const before = await counted();
  const sent = await driveTraffic(apiUrl, [users.keys.checkout], 5);
  await driveTraffic(apiUrl, [users.keys.production, users.keys.productionOld], 3);
  // The API sends its counts every second; the flush moves whatever has arrived.
  for (let i = 0; i < 100 && (await counted()) < before + sent; i++) {
    await new Promise((r) => setTimeout(r, 200));
    await flushTraffic({ redis, keys, db });
  }
  await flushTraffic({ redis, keys, db });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'cos-screenshots-'));
  const services = await startLocalServices(dir, { durable: false });
  const db = createDb(services.databaseUrl, DB_ROLES.tool);
  let browser: Browser | undefined;
  const port = await freePort();
  const apiPort = await freePort();
  const processEnv = {
    ...process.env,
    NODE_ENV: 'development',
    DATABASE_URL: services.databaseUrl,
    REDIS_URL: services.redisUrl,
    COS_SECRET: SECRET,
    DASHBOARD_PORT: String(port),
    PORT: String(apiPort),
    TRUST_PROXY: 'loopback',
    LOG_LEVEL: 'warn',
  };
  const dashboard = spawn(process.execPath, [path.join(root, 'dist', 'dashboard', 'main.js')], { env: processEnv, stdio: 'inherit' });
  const api = spawn(process.execPath, [path.join(root, 'dist', 'api', 'main.js')], { env: processEnv, stdio: 'inherit' });
  const redis = new Redis(services.redisUrl, { maxRetriesPerRequest: null });
  try {
    const { error } = await migrateToLatest(db);
    if (error) throw error;
    const users = await seedScreenshotAccount(db, SECRET);
    const url = `http://127.0.0.1:${port}`;
    await waitFor(`${url}/healthz`);
    await waitFor(`http://127.0.0.1:${apiPort}/readyz`);
    await addTraffic(db, redis, users, `http://127.0.0.1:${apiPort}`);
    mkdirSync(OUT, { recursive: true });
    browser = await launchChromium();
    for (const file of await shoot(browser, url, users)) process.stdout.write(`saved ${file}\n`);
  } finally {
    await browser?.close();
    dashboard.kill('SIGTERM');
    api.kill('SIGTERM');
    redis.disconnect();
    await db.destroy();
    await services.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`screenshots failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
