import { listAudit, recordAudit } from '../../shared/audit/audit.repository';
import { listKeys } from '../../shared/credentials/key.repository';
import { addUser, DashboardClient, spawnDashboard, type PageResponse } from '../support/dashboard';
import { eventually } from '../support/harness';
import { stop, type Spawned } from '../support/processes';
import { createTestEnv, type TestEnv } from '../support/test-env';
import { flushSeeded, seedMinute } from '../support/traffic';

/** The audit log's page, filters and CSV export, and the traffic export, against the built dashboard. */
let env: TestEnv;
let dashboard: Spawned & { url: string };
let acme: string;
let other: string;
let owner: DashboardClient;
let viewer: DashboardClient;
let stranger: DashboardClient;
let nextClient = 1;
const client = (address = `198.51.100.${nextClient++}`) => new DashboardClient(dashboard.url, address);

const FORMULA = '=HYPERLINK("http://x","y")';
const json = { Accept: 'application/json' };
/** The page's markup with whitespace between tags removed and runs of it made one space. */
const flat = (page: PageResponse) => page.body.replace(/\s+/g, ' ').replace(/> </g, '><').replace(/ >/g, '>');
/** The audit table's rows as text: cells joined by " | ". */
const rowsOf = (page: PageResponse) =>
  [...flat(page).matchAll(/<tr><td data-label="When">(.*?)<\/tr>/g)].map((m) =>
    `<td>${m[1]!}`
      .split('</td>')
      .map((cell) => cell.replace(/<[^>]*>/g, '').trim())
      .filter(Boolean)
      .join(' | '),
  );
/** CSV records of a body in which no field spans lines (the tests' data has none). */
const records = (body: string) => body.split('\r\n').slice(0, -1);

async function createKey(name: string): Promise<{ id: string; last4: string }> {
  const { posted } = await owner.submit('/keys/test', { name, scopes: ['context'] });
  expect(posted.status).toBe(303);
  const key = (await listKeys(env.db, acme)).filter((k) => k.name === name).at(-1)!;
  return { id: key.id, last4: key.last4 };
}

beforeAll(async () => {
  env = await createTestEnv();
  acme = await addUser(env.db, 'audit-acme', 'owner@audit.test', 'owner');
  await addUser(env.db, 'audit-acme', 'viewer@audit.test', 'viewer');
  other = await addUser(env.db, 'audit-other', 'owner@other.test', 'owner');
  dashboard = await spawnDashboard(env.processEnv({ TRUST_PROXY: 'loopback' }));
  owner = client('81.2.69.160');
  viewer = client('198.51.100.200');
  stranger = client('198.51.100.201');
  expect((await owner.signIn('owner@audit.test')).status).toBe(303);
  expect((await viewer.signIn('viewer@audit.test')).status).toBe(303);
  expect((await stranger.signIn('owner@other.test')).status).toBe(303);
});
afterAll(async () => {
  await stop(dashboard);
  await env.close();
});

describe('audit log page', () => {
  let checkout: { id: string; last4: string };
  let next: { id: string; last4: string };
  let gone: { id: string; last4: string };

  beforeAll(async () => {
    checkout = await createKey('checkout');
    expect((await owner.submit(`/keys/test/${checkout.id}/rotate`, { grace: '1h' })).posted.status).toBe(303);
    next = (await listKeys(env.db, acme)).find((k) => k.name === 'checkout' && k.id !== checkout.id)!;
    gone = await createKey('short-lived');
    expect((await owner.submit(`/keys/test/${gone.id}/delete`)).posted.status).toBe(303);
  });

  it('names keys by name and last 4 characters, to the second in UTC, and a rotation by both keys', async () => {
    const page = await owner.get('/audit');
    expect(page.status).toBe(200);
    const rows = rowsOf(page);
    const [entry] = await listAudit(env.db, acme, 1, undefined, { action: 'key.rotate' });
    const when = `${entry!.createdAt.slice(0, 10)} ${entry!.createdAt.slice(11, 19)} UTC`;
    expect(rows).toContain(
      `${when} | owner@audit.test | Rotated a key | checkout …${checkout.last4} → checkout …${next.last4} (test) | GB`,
    );
    expect(rows).toContainEqual(
      expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \| owner@audit\.test \| Created a key \| checkout …/),
    );
    expect(rows).toContainEqual(expect.stringContaining(`Deleted a key | short-lived …${gone.last4} (test)`));
    // Ids are not what a person reads: they are only in the cells' titles.
    expect(rows.join('\n')).not.toContain(checkout.id);
  });

  it('still names a key whose row is gone, from what the entry stored', async () => {
    await env.db.deleteFrom('api_keys').where('id', '=', gone.id).execute();
    const rows = rowsOf(await owner.get('/audit?action=key.create'));
    expect(rows).toContainEqual(expect.stringContaining(`Created a key | short-lived …${gone.last4} (test)`));
    const csv = await owner.get(`/audit.csv?key=${gone.id}`);
    expect(
      records(csv.body)
        .slice(1)
        .map((r) => r.split(',').slice(2, 9)),
    ).toEqual([
      ['key.delete', 'Deleted a key', '', 'test', gone.id, 'short-lived', gone.last4],
      ['key.create', 'Created a key', '', 'test', gone.id, 'short-lived', gone.last4],
    ]);
  });

  it('filters by actor, action, key and period, and pages back keeping the filters', async () => {
    const byKey = rowsOf(await owner.get(`/audit?key=${next.id}`));
    expect(byKey).toEqual([expect.stringContaining('Rotated a key')]);
    const byOldKey = rowsOf(await owner.get(`/audit?key=${checkout.id}`));
    expect(byOldKey.map((r) => r.split(' | ')[2])).toEqual(['Rotated a key', 'Created a key']);
    const byViewer = rowsOf(await owner.get('/audit?actor=viewer%40audit.test'));
    expect(byViewer).toEqual([expect.stringContaining('viewer@audit.test | Signed in')]);
    const today = new Date().toISOString().slice(0, 10);
    expect(rowsOf(await owner.get(`/audit?from=${today}&to=${today}&action=key.delete`))).toHaveLength(1);
    expect(rowsOf(await owner.get('/audit?from=2020-01-01&to=2020-12-31'))).toEqual([]);
    // Empty fields, as the form sends them, are no filter.
    expect(rowsOf(await owner.get('/audit?actor=&action=&key=&from=&to=')).length).toBeGreaterThan(5);

    // 60 sign-outs yesterday: the first page holds 50, the older-entries link keeps the filters.
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    for (let i = 0; i < 60; i++) {
      await recordAudit(env.db, { accountId: acme, actor: 'old@audit.test', action: 'session.sign-out', country: null });
    }
    await env.db
      .updateTable('dashboard_audit')
      .set({ created_at: new Date(`${yesterday}T12:00:00Z`) })
      .where('actor', '=', 'old@audit.test')
      .execute();
    const first = await viewer.get(`/audit?actor=old%40audit.test&from=${yesterday}&to=${yesterday}`);
    expect(rowsOf(first)).toHaveLength(50);
    const older = /<a href="([^"]+)">Older entries<\/a>/.exec(first.body)![1]!.replace(/&amp;/g, '&');
    expect(older).toMatch(new RegExp(`^/audit\\?actor=old%40audit.test&from=${yesterday}&to=${yesterday}&before=\\d+$`));
    const second = await viewer.get(older);
    expect(rowsOf(second)).toHaveLength(10);
    expect(rowsOf(second).every((r) => r.includes('old@audit.test | Signed out'))).toBe(true);
    expect(second.body).not.toContain('Older entries');
    // The form shows what is chosen.
    expect(first.body).toMatch(/<option value="old@audit.test"\s+selected>/);
    // Dates are typed as YYYY-MM-DD (a date picker would show the browser's locale's format).
    expect(first.body).toMatch(new RegExp(`name="from"\\s+type="text"[^>]*placeholder="YYYY-MM-DD"[^>]*value="${yesterday}"`));
  });

  it.each([
    ['action=key.explode', 'action: expected one of'],
    ['from=2026-13-01', 'from: expected a real date'],
    ['from=2026-02-30', 'from: expected a real date'],
    ['to=29.11.2026', 'to: expected a date as YYYY-MM-DD'],
    ['from=2026-11-29&to=2026-11-01', 'to: expected a date on or after'],
    ['key=not%20a%20key', 'key: expected a key id'],
    ['before=abc', 'before: expected an entry id'],
    ['actor=a&actor=b', 'actor:'],
    [`actor=${'x'.repeat(300)}`, 'actor: expected at most 254 characters'],
  ])('answers a bad filter (%s) with a 400 page saying what is wrong', async (query, message) => {
    const page = await owner.get(`/audit?${query}`);
    expect(page.status).toBe(400);
    expect(page.body).toContain('VALIDATION_ERROR');
    expect(page.body).toContain(message.replace(/"/g, '&quot;'));
    const csv = await owner.get(`/audit.csv?${query}`, json);
    expect(csv.status).toBe(400);
    expect(JSON.parse(csv.body).error).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [expect.anything()] } });
  });

  it('shows a viewer the same log as an owner, and never the entries of another account', async () => {
    const ownersPage = rowsOf(await owner.get('/audit'));
    const viewersPage = rowsOf(await viewer.get('/audit'));
    // The viewer's page is read after the owner's: the same entries (the owner's latest visit adds none).
    expect(viewersPage).toEqual(ownersPage);
    expect(records((await viewer.get('/audit.csv')).body)).toEqual(records((await owner.get('/audit.csv')).body));

    const theirs = await stranger.get('/audit');
    expect(theirs.body).not.toContain('audit.test');
    expect(theirs.body).not.toContain('checkout');
    expect(rowsOf(theirs).every((r) => r.includes('owner@other.test'))).toBe(true);
    // Asking for acme's key or actor by address finds nothing of acme's.
    for (const query of [`key=${checkout.id}`, 'actor=owner%40audit.test']) {
      expect(rowsOf(await stranger.get(`/audit?${query}`))).toEqual([]);
      expect(records((await stranger.get(`/audit.csv?${query}`)).body)).toHaveLength(1);
    }
    const csv = (await stranger.get('/audit.csv')).body;
    expect(csv).not.toContain('audit.test');
    expect(csv).not.toContain(checkout.id);
    expect((await listAudit(env.db, other, 100)).length).toBe(records(csv).length - 1);
  });
});

describe('CSV exports', () => {
  let formula: { id: string; last4: string };

  beforeAll(async () => {
    formula = await createKey(FORMULA);
  });

  it('exports the filtered audit log as RFC 4180 CSV, a download with ISO 8601 times, formulas made inert', async () => {
    const res = await owner.get(`/audit.csv?action=key.create&key=${formula.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    const today = new Date().toISOString().slice(0, 10);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="audit-log-audit-acme-${today}.csv"`);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body.endsWith('\r\n')).toBe(true);
    expect(res.body.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
    const [header, row, ...rest] = records(res.body);
    expect(header).toBe(
      'time,actor,action,description,subject,environment,key_id,key_name,key_last4,new_key_id,new_key_name,new_key_last4,country',
    );
    expect(rest).toEqual([]);
    // The name is quoted (it holds commas and quotes, doubled) and starts with a single quote: a spreadsheet shows it as text.
    expect(row).toMatch(
      new RegExp(
        `^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z,owner@audit\\.test,key\\.create,Created a key,,test,${formula.id},` +
          `"'=HYPERLINK\\(""http://x"",""y""\\)",${formula.last4},,,,GB$`,
      ),
    );
    // The page links to the export of what it shows.
    expect((await owner.get(`/audit?key=${formula.id}`)).body).toContain(`href="/audit.csv?key=${formula.id}"`);
  });

  it("exports the traffic page's series for the chosen key and window, the key's name inert", async () => {
    const now = Date.now();
    await seedMinute(env, formula.id, now, { requests: { 'context:2xx': 4, 'context:429': 1 }, latenciesMs: [3, 3, 3, 3] });
    await flushSeeded(env);
    const res = await viewer.get(`/traffic/test.csv?window=1h&key=${formula.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    const today = new Date().toISOString().slice(0, 10);
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="traffic-audit-acme-test-HYPERLINK-http-x-y-${formula.last4}-1h-${today}.csv"`,
    );
    const [header, ...rows] = records(res.body);
    expect(header).toBe('time,step_seconds,environment,key_id,key_name,key_last4,requests,2xx,3xx,4xx,5xx,401,403,429,p50_ms,p95_ms');
    expect(rows).toHaveLength(60);
    const minute = new Date(now - (now % 60_000)).toISOString();
    const busy = rows.filter((r) => !r.includes(',0,0,0,0,0,0,0,0,,'));
    expect(busy).toEqual([expect.stringMatching(new RegExp(`^${minute},60,test,${formula.id},"'=HYPERLINK\\(""http://x"",""y""\\)",`))]);
    expect(busy[0]!.split(',').slice(-10, -2)).toEqual(['5', '4', '0', '1', '0', '0', '0', '1']);
    expect(rows[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00\.000Z,60,test,/);
    // The whole account, and the page's link to it.
    const all = records((await owner.get('/traffic/test.csv?window=24h')).body);
    expect(all).toHaveLength(25);
    expect(all[1]).toMatch(/^[^,]+,3600,test,,,,/);
    expect((await owner.get(`/traffic/test?window=1h&key=${formula.id}`)).body).toContain(
      `href="/traffic/test.csv?window=1h&amp;key=${formula.id}"`,
    );
  });

  it("refuses a bad window with 400 and another account's key with 404", async () => {
    const bad = await owner.get('/traffic/test.csv?window=2h', json);
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error.code).toBe('VALIDATION_ERROR');
    const theirs = await stranger.get(`/traffic/test.csv?key=${formula.id}`, json);
    expect(theirs.status).toBe(404);
    expect(theirs.body).not.toContain('HYPERLINK');
    expect((await stranger.get('/traffic/prod.csv', json)).status).toBe(404);
  });
});

describe('refused sign-ins', () => {
  it('are audited once per user per window, however many are refused', async () => {
    await addUser(env.db, 'audit-acme', 'target@audit.test', 'viewer');
    for (let i = 0; i < 5; i++) expect((await client().signIn('target@audit.test', 'a wrong guess')).status).toBe(401);
    for (let i = 0; i < 12; i++) expect((await client().signIn('target@audit.test', 'a wrong guess')).status).toBe(429);
    const refused = async () =>
      (await listAudit(env.db, acme, 10, undefined, { actor: 'target@audit.test', action: 'session.sign-in-refused' })).length;
    const failed = async () =>
      (await listAudit(env.db, acme, 10, undefined, { actor: 'target@audit.test', action: 'session.sign-in-failed' })).length;
    await eventually(async () => (await refused()) === 1 && (await failed()) === 5);
    const page = await viewer.get('/audit?actor=target%40audit.test&action=session.sign-in-refused');
    expect(rowsOf(page)).toEqual([expect.stringContaining('target@audit.test | Sign-in refused (too many attempts)')]);
    // Once the window has passed (its claim expired), the next refusal is written again.
    await env.redis.del(...(await env.keysMatching(`*{signin}:refused:*`)));
    expect((await client().signIn('target@audit.test', 'a wrong guess')).status).toBe(429);
    await eventually(async () => (await refused()) === 2);
    // Still refused entries only for known emails.
    expect((await client().signIn('nobody@audit.test', 'x')).status).toBe(401);
    expect(await listAudit(env.db, acme, 10, undefined, { actor: 'nobody@audit.test' })).toEqual([]);
  });
});
