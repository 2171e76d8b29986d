import { listAudit } from '../../shared/audit/audit.repository';
import { countOwners, findUserForSignIn } from '../../shared/dashboard-users/user.repository';
import type { DashboardDeps } from '../../dashboard/dependencies';
import { INVITATION_LIFETIME_MS } from '../../dashboard/services/team.service';
import { addUser, DashboardClient, startDashboardInProcess } from '../support/dashboard';
import { createTestEnv, type TestEnv } from '../support/test-env';

/**
 * The team page: members listed, teammates invited by a one-time link, roles changed and
 * members removed by owners, on a dashboard run in this process over real Postgres and Redis
 * with a clock the tests move (an invitation's expiry reads it).
 */
let env: TestEnv;
let deps: DashboardDeps;
let closeDashboard: () => Promise<void>;
let url: string;
let now = Date.parse('2026-12-01T10:00:00.000Z');
let nextClient = 1;

const client = () => new DashboardClient(url, `203.0.113.${nextClient++}`);
const userId = async (email: string) => (await findUserForSignIn(env.db, email))!.id;
const entries = async (accountId: string) => listAudit(env.db, accountId, 50);

beforeAll(async () => {
  env = await createTestEnv();
  ({ deps, url, close: closeDashboard } = await startDashboardInProcess(env, () => now));
});
afterAll(async () => {
  await closeDashboard();
  await env.close();
});

/** An owner signed in on the team page (its forms' tokens at hand). */
async function ownerOnTeamPage(email: string): Promise<DashboardClient> {
  const browser = client();
  expect((await browser.signIn(email)).status).toBe(303);
  expect((await browser.get('/account/team')).status).toBe(200);
  return browser;
}

/** Invites `email` as `role`; returns the link's path (`/invite/<token>`) from the page shown after. */
async function invite(owner: DashboardClient, email: string, role: 'owner' | 'viewer' = 'viewer'): Promise<string> {
  await owner.get('/account/team');
  const posted = await owner.post('/account/team/invite', { email, role });
  expect(posted).toMatchObject({ status: 303, location: '/account/team' });
  const page = await owner.get('/account/team');
  const link = /value="http:\/\/127\.0\.0\.1:\d+(\/invite\/[A-Za-z0-9_-]{43})"/.exec(page.body);
  expect(link).not.toBeNull();
  return link![1]!;
}

/** The invitee opens the link and chooses a password. */
async function accept(path: string, password = 'the invitee password', confirm = password) {
  const invitee = client();
  const opened = await invitee.get(path);
  const posted = await invitee.post(path, { password, confirm });
  return { invitee, opened, posted };
}

describe('the team page', () => {
  let account: string;

  beforeAll(async () => {
    account = await addUser(env.db, 'team-acme', 'owner@team.test', 'owner');
    await addUser(env.db, 'team-acme', 'viewer@team.test', 'viewer');
    await addUser(env.db, 'team-other', 'stranger@other.test', 'owner');
  });

  it('lists the account’s members with role, two-factor and last sign-in, linked from the account pages', async () => {
    const owner = client();
    await owner.signIn('owner@team.test');
    expect((await owner.get('/account/two-factor')).body).toContain('href="/account/team"');
    const page = await owner.get('/account/team');
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-store');
    const ownerRow = /<tr data-member="owner@team.test">([\s\S]*?)<\/tr>/.exec(page.body)![1]!;
    expect(ownerRow).toContain('<td data-label="Role">owner</td>');
    expect(ownerRow).toContain('<td data-label="Two-factor">off</td>');
    expect(ownerRow).toMatch(/<time datetime="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/time>/);
    const viewerRow = /<tr data-member="viewer@team.test">([\s\S]*?)<\/tr>/.exec(page.body)![1]!;
    expect(viewerRow).toMatch(/<td data-label="Last sign-in">\s*never\s*<\/td>/);
    // Another account's users are never listed.
    expect(page.body).not.toContain('stranger@other.test');
    expect(page.body).not.toMatch(/<script(?![^>]*src=)/);
  });

  it('shows an invitation link once, and the invitee joins with the role by choosing a password', async () => {
    const owner = await ownerOnTeamPage('owner@team.test');
    const posted = await owner.post('/account/team/invite', { email: 'New.Person@Team.test', role: 'viewer' });
    expect(posted).toMatchObject({ status: 303, location: '/account/team' });
    const shown = await owner.get('/account/team');
    const path = /value="http:\/\/127\.0\.0\.1:\d+(\/invite\/([A-Za-z0-9_-]{43}))"/.exec(shown.body)!;
    expect(shown.body).toContain('Invitation link for new.person@team.test');
    expect(shown.body).toContain('<tr data-invitation="new.person@team.test">');
    // Only a hash of the token is kept, and a reload does not show the link again.
    const stored = JSON.stringify(await env.db.selectFrom('dashboard_invitations').selectAll().execute());
    expect(stored).not.toContain(path[2]);
    const reload = await owner.get('/account/team');
    expect(reload.body).not.toContain(path[2]);
    expect(reload.body).not.toContain('data-invitation-link');

    const opened = await client().get(path[1]!);
    expect(opened.status).toBe(200);
    expect(opened.headers.get('referrer-policy')).toBe('strict-origin');
    expect(opened.body).toContain('Join team-acme');
    expect(opened.body).toContain('<strong>viewer</strong>');

    // The password rule of every password; and its repetition must match.
    expect((await accept(path[1]!, 'short')).posted.status).toBe(400);
    const differ = await accept(path[1]!, 'the invitee password', 'another password!!');
    expect(differ.posted.status).toBe(400);
    expect(differ.posted.body).toContain('differ');
    expect(await findUserForSignIn(env.db, 'new.person@team.test')).toBeNull();

    // A second page of the same link, opened before it is used, for later.
    const late = client();
    expect((await late.get(path[1]!)).status).toBe(200);
    const { invitee, posted: joined } = await accept(path[1]!);
    expect(joined).toMatchObject({ status: 303, location: '/keys/test' });
    const user = (await findUserForSignIn(env.db, 'new.person@team.test'))!;
    expect(user).toMatchObject({ accountId: account, role: 'viewer' });
    // Signed in as them, as a viewer of the account.
    const team = await invitee.get('/account/team');
    expect(team.status).toBe(200);
    expect(team.body).toContain('new.person@team.test · viewer · team-acme');
    // And the password works for signing in again.
    expect((await client().signIn('new.person@team.test', 'the invitee password')).location).toBe('/keys/test');

    // Used: the link is refused from now on, whoever opens it.
    const reused = await client().get(path[1]!);
    expect(reused.status).toBe(410);
    expect(reused.body).toContain('already used');
    const reusedPost = await late.post(path[1]!, { password: 'the invitee password', confirm: 'the invitee password' });
    expect(reusedPost.status).toBe(410);
    expect(reusedPost.body).toContain('already used');
    // Gone from the invitations waiting.
    expect((await owner.get('/account/team')).body).not.toContain('<tr data-invitation="new.person@team.test">');

    const audit = await entries(account);
    expect(audit.find((e) => e.action === 'team.invite')).toMatchObject({ actor: 'owner@team.test', subject: 'new.person@team.test' });
    expect(audit.find((e) => e.action === 'team.invite-accept')).toMatchObject({ actor: 'new.person@team.test' });
  });

  it('acts once on a form sent twice: the second answer says so and no second invitation exists', async () => {
    const owner = await ownerOnTeamPage('owner@team.test');
    const first = await owner.post('/account/team/invite', { email: 'twice@team.test', role: 'owner' });
    const second = await owner.post('/account/team/invite', { email: 'twice@team.test', role: 'owner' });
    expect(first).toMatchObject({ status: 303, location: '/account/team' });
    expect(second).toMatchObject({ status: 303, location: '/account/team?again=acted' });
    expect(await env.db.selectFrom('dashboard_invitations').select('id').where('email', '=', 'twice@team.test').execute()).toHaveLength(1);
  });

  it('refuses an expired link and a revoked one with a clear page', async () => {
    const owner = await ownerOnTeamPage('owner@team.test');
    const expiring = await invite(owner, 'late@team.test');
    const revoked = await invite(owner, 'withdrawn@team.test', 'owner');

    const row = await env.db
      .selectFrom('dashboard_invitations')
      .select('id')
      .where('email', '=', 'withdrawn@team.test')
      .executeTakeFirstOrThrow();
    // The invitee's page is open when the owner revokes: sending it is refused.
    const invitee = client();
    expect((await invitee.get(revoked)).status).toBe(200);
    const expiringPage = client();
    expect((await expiringPage.get(expiring)).status).toBe(200);
    await owner.get('/account/team');
    expect(await owner.post(`/account/team/invitations/${row.id}/revoke`)).toMatchObject({
      status: 303,
      location: '/account/team?done=revoked',
    });
    const gone = await client().get(revoked);
    expect(gone.status).toBe(410);
    expect(gone.body).toContain('revoked');
    expect((await invitee.post(revoked, { password: 'the invitee password', confirm: 'the invitee password' })).status).toBe(410);
    expect(await findUserForSignIn(env.db, 'withdrawn@team.test')).toBeNull();
    // Revoked twice: nothing is waiting any more.
    await owner.get('/account/team');
    expect((await owner.post(`/account/team/invitations/${row.id}/revoke`)).status).toBe(404);

    now += INVITATION_LIFETIME_MS + 1000;
    try {
      const expired = await client().get(expiring);
      expect(expired.status).toBe(410);
      expect(expired.body).toContain('expired');
      const late = await expiringPage.post(expiring, { password: 'the invitee password', confirm: 'the invitee password' });
      expect(late.status).toBe(410);
      expect(late.body).toContain('expired');
      expect(await findUserForSignIn(env.db, 'late@team.test')).toBeNull();
      // An expired invitation does not stand in the way of a new one.
      // (A week on, the owner's session is past its lifetime: they sign in again.)
      const again = await invite(await ownerOnTeamPage('owner@team.test'), 'late@team.test');
      expect((await accept(again)).posted.status).toBe(303);
    } finally {
      now -= INVITATION_LIFETIME_MS + 1000;
    }
    expect((await client().get('/invite/not-a-token')).status).toBe(404);
    // A user made meanwhile with the invited email (by the CLI): the link cannot make a second one.
    const taken = await invite(await ownerOnTeamPage('owner@team.test'), 'raced@team.test');
    await addUser(env.db, 'team-other', 'raced@team.test', 'viewer');
    const refused = await accept(taken);
    expect(refused.posted.status).toBe(409);
    expect(refused.posted.body).toContain('already has a dashboard user');
    expect((await findUserForSignIn(env.db, 'raced@team.test'))!.accountId).not.toBe(account);
    expect((await entries(account)).find((e) => e.action === 'team.invite-revoke')).toMatchObject({ subject: 'withdrawn@team.test' });
  });

  it('refuses inviting an email that is already a user (of any account), or already invited', async () => {
    const owner = await ownerOnTeamPage('owner@team.test');
    for (const email of ['viewer@team.test', 'stranger@other.test']) {
      await owner.get('/account/team');
      const refused = await owner.post('/account/team/invite', { email, role: 'viewer' });
      expect(refused.status).toBe(409);
      expect(refused.body).toContain(`${email} already has a dashboard user`);
      // The form again, filled in, with fresh tokens.
      expect(refused.body).toContain(`value="${email}"`);
      expect(refused.body).toContain('name="_once"');
    }
    await invite(owner, 'pending@team.test');
    await owner.get('/account/team');
    const twice = await owner.post('/account/team/invite', { email: 'pending@team.test', role: 'owner' });
    expect(twice.status).toBe(409);
    expect(twice.body).toContain('already invited');
    await owner.get('/account/team');
    expect((await owner.post('/account/team/invite', { email: 'not an email', role: 'viewer' })).status).toBe(400);
    expect((await owner.post('/account/team/invite', { email: 'x@team.test', role: 'admin' })).status).toBe(400);
  });

  it('changes a role and removes a member, ending that member’s sessions, audited', async () => {
    await addUser(env.db, 'team-acme', 'member@team.test', 'viewer');
    const member = client();
    await member.signIn('member@team.test');
    expect((await member.get('/keys/test')).status).toBe(200);
    const id = await userId('member@team.test');

    const owner = await ownerOnTeamPage('owner@team.test');
    expect(await owner.post(`/account/team/members/${id}/role`, { role: 'owner' })).toMatchObject({
      status: 303,
      location: '/account/team?done=role-changed',
    });
    expect((await findUserForSignIn(env.db, 'member@team.test'))!.role).toBe('owner');
    const ended = await member.get('/keys/test');
    expect(ended.status).toBe(303);
    expect(ended.location).toMatch(/^\/signin/);
    expect(await env.db.selectFrom('dashboard_sessions').select('id').where('user_id', '=', id).execute()).toHaveLength(0);

    await member.signIn('member@team.test');
    expect((await member.get('/account/team')).body).toContain('member@team.test · owner');
    await owner.get('/account/team');
    expect((await owner.post(`/account/team/members/${id}/role`, { role: 'viewer' })).status).toBe(303);
    expect((await member.get('/keys/test')).status).toBe(303);

    await member.signIn('member@team.test');
    // Remove asks first, on a page of its own naming the member; the list only links to it.
    const list = await owner.get('/account/team');
    expect(list.body).toContain(`<a class="button danger" href="/account/team/members/${id}/remove"`);
    expect(list.body).not.toContain(`action="/account/team/members/${id}/remove"`);
    const confirm = await owner.get(`/account/team/members/${id}/remove`);
    expect(confirm.status).toBe(200);
    expect(confirm.body).toContain('data-confirm="remove-member"');
    expect(confirm.body).toContain('Remove member@team.test from team-acme?');
    expect(confirm.body).toMatch(/<dt>Last sign-in<\/dt>\s*<dd>\d{4}-\d{2}-\d{2} \d{2}:\d{2}/);
    expect(confirm.body).toContain(`action="/account/team/members/${id}/remove"`);
    expect(await findUserForSignIn(env.db, 'member@team.test')).not.toBeNull();
    expect(await owner.post(`/account/team/members/${id}/remove`)).toMatchObject({ status: 303, location: '/account/team?done=removed' });
    expect(await findUserForSignIn(env.db, 'member@team.test')).toBeNull();
    expect((await member.get('/keys/test')).status).toBe(303);
    expect((await client().signIn('member@team.test')).status).toBe(401);

    const audit = (await entries(account)).filter((e) => e.subject === 'member@team.test').map((e) => e.action);
    expect(audit).toEqual(['team.remove', 'team.role-viewer', 'team.role-owner']);
  });

  it('changes a role and removes a member once for a form sent twice at once (a double click)', async () => {
    const account = await addUser(env.db, 'team-twice', 'boss@twice.test', 'owner');
    await addUser(env.db, 'team-twice', 'pat@twice.test', 'viewer');
    const id = await userId('pat@twice.test');
    const owner = await ownerOnTeamPage('boss@twice.test');
    const roles = await Promise.all([1, 2].map(() => owner.post(`/account/team/members/${id}/role`, { role: 'owner' })));
    expect(roles.map((r) => r.location).sort()).toEqual(['/account/team?done=role-changed', '/account/team?done=role-changed&again=acted']);
    expect((await owner.get('/account/team?done=role-changed&again=acted')).body).toContain('This form was already sent');
    await owner.get(`/account/team/members/${id}/remove`);
    const removals = await Promise.all([1, 2].map(() => owner.post(`/account/team/members/${id}/remove`)));
    expect(removals.map((r) => [r.status, r.location]).sort()).toEqual([
      [303, '/account/team?done=removed'],
      [303, '/account/team?done=removed&again=acted'],
    ]);
    const audit = (await entries(account)).filter((e) => e.subject === 'pat@twice.test').map((e) => e.action);
    expect(audit).toEqual(['team.remove', 'team.role-owner']);
  });

  it('keeps the last owner: not demoted, not removed, also when two owners demote each other at once', async () => {
    const solo = await addUser(env.db, 'team-solo', 'solo@team.test', 'owner');
    const owner = await ownerOnTeamPage('solo@team.test');
    const id = await userId('solo@team.test');
    const demoted = await owner.post(`/account/team/members/${id}/role`, { role: 'viewer' });
    expect(demoted.status).toBe(409);
    expect(demoted.body).toContain('at least one owner');
    expect(demoted.body).toContain('<tr data-member="solo@team.test">');
    await owner.get('/account/team');
    expect((await owner.post(`/account/team/members/${id}/remove`)).status).toBe(409);
    expect((await findUserForSignIn(env.db, 'solo@team.test'))!.role).toBe('owner');

    // Two owners, each demoting the other at the same moment: one wins, one owner is left.
    await addUser(env.db, 'team-solo', 'second@team.test', 'owner');
    const [a, b] = [await findUserForSignIn(env.db, 'solo@team.test'), await findUserForSignIn(env.db, 'second@team.test')];
    for (let round = 0; round < 5; round++) {
      const results = await Promise.all([
        deps.team.changeRole({ user: a!, country: null }, b!.id, 'viewer'),
        deps.team.changeRole({ user: b!, country: null }, a!.id, 'viewer'),
      ]);
      expect(results.map((r) => r.outcome).sort()).toEqual(['done', 'last-owner']);
      expect(await countOwners(env.db, solo)).toBe(1);
      await env.db.updateTable('dashboard_users').set({ role: 'owner' }).where('account_id', '=', solo).execute();
    }
    // And through the pages: both forms sent at once leave exactly one owner.
    const first = await ownerOnTeamPage('solo@team.test');
    const second = await ownerOnTeamPage('second@team.test');
    await Promise.all([
      first.post(`/account/team/members/${b!.id}/role`, { role: 'viewer' }),
      second.post(`/account/team/members/${a!.id}/role`, { role: 'viewer' }),
    ]);
    expect(await countOwners(env.db, solo)).toBe(1);
  });

  it('lets viewers read the member list but change nothing', async () => {
    const viewer = client();
    await viewer.signIn('viewer@team.test');
    const page = await viewer.get('/account/team');
    expect(page.status).toBe(200);
    expect(page.body).toContain('<tr data-member="owner@team.test">');
    expect(page.body).not.toContain('action="/account/team/invite"');
    expect(page.body).not.toContain('/role"');
    expect(page.body).not.toContain('data-invitation=');
    const ownerId = await userId('owner@team.test');
    expect((await viewer.post('/account/team/invite', { email: 'sneaky@team.test', role: 'owner' })).status).toBe(403);
    await viewer.get('/account/team');
    expect((await viewer.post(`/account/team/members/${ownerId}/role`, { role: 'viewer' })).status).toBe(403);
    expect((await viewer.get(`/account/team/members/${ownerId}/remove`)).status).toBe(403);
    await viewer.get('/account/team');
    expect((await viewer.post(`/account/team/members/${ownerId}/remove`)).status).toBe(403);
    expect((await findUserForSignIn(env.db, 'owner@team.test'))!.role).toBe('owner');
    expect(await env.db.selectFrom('dashboard_invitations').select('id').where('email', '=', 'sneaky@team.test').execute()).toHaveLength(0);
  });

  it('never changes another account’s members or invitations', async () => {
    const stranger = await ownerOnTeamPage('stranger@other.test');
    expect((await stranger.get('/account/team')).body).not.toContain('owner@team.test');
    const victim = await userId('viewer@team.test');
    const role = await stranger.post(`/account/team/members/${victim}/role`, { role: 'owner' });
    expect(role.status).toBe(404);
    expect(role.body).not.toContain('viewer@team.test');
    const asked = await stranger.get(`/account/team/members/${victim}/remove`);
    expect(asked.status).toBe(404);
    expect(asked.body).not.toContain('viewer@team.test');
    await stranger.get('/account/team');
    expect((await stranger.post(`/account/team/members/${victim}/remove`)).status).toBe(404);
    expect((await findUserForSignIn(env.db, 'viewer@team.test'))!.role).toBe('viewer');

    const owner = await ownerOnTeamPage('owner@team.test');
    const path = await invite(owner, 'kept@team.test');
    const row = await env.db
      .selectFrom('dashboard_invitations')
      .select('id')
      .where('email', '=', 'kept@team.test')
      .executeTakeFirstOrThrow();
    await stranger.get('/account/team');
    expect((await stranger.post(`/account/team/invitations/${row.id}/revoke`)).status).toBe(404);
    expect((await client().get(path)).status).toBe(200);
  });
});
