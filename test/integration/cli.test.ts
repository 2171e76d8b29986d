import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { listAudit } from '../../shared/audit/audit.repository';
import { runCliCaptured } from '../support/cli';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const cli = (...argv: string[]) => runCliCaptured(argv, h.env.processEnv());
const json = async (...argv: string[]) => {
  const result = await cli(...argv, '--json');
  expect(result).toMatchObject({ code: 0, err: '' });
  expect(result.out.trim().split('\n')).toHaveLength(1);
  return JSON.parse(result.out);
};

describe('operator CLI', () => {
  it('keys create prints exactly {id, key, account, environment, scopes, createdAt} and creates the account as starter', async () => {
    const issued = await json('keys', 'create', '--account', 'cli-new', '--env', 'live');
    expect(Object.keys(issued).sort()).toEqual(['account', 'createdAt', 'environment', 'id', 'key', 'scopes']);
    expect(issued).toMatchObject({ account: 'cli-new', environment: 'live', scopes: ['context', 'outcome', 'profile'] });
    expect(issued.key).toMatch(/^cos_sk_live_[0-9A-Za-z]{40}$/);
    const accounts = await json('accounts', 'list');
    expect(accounts.data).toContainEqual(expect.objectContaining({ name: 'cli-new', plan: 'starter', restricted: false }));
    const res = await h.http().get('/v1/profile/x').set(bearer(issued.key));
    expect(res.status).toBe(404);
  });

  it('keys create honours --name, --scopes and --rps', async () => {
    const issued = await json(
      'keys',
      'create',
      '--account',
      'cli-scoped',
      '--env',
      'live',
      '--name',
      'ingest',
      '--scopes',
      'outcome',
      '--rps',
      '50',
    );
    expect(issued.scopes).toEqual(['outcome']);
    const listed = await json('keys', 'list', '--account', 'cli-scoped');
    expect(listed.data).toEqual([
      expect.objectContaining({
        id: issued.id,
        name: 'ingest',
        environment: 'live',
        scopes: ['outcome'],
        rateLimitRps: 50,
        status: 'active',
        last4: issued.key.slice(-4),
      }),
    ]);
    expect(JSON.stringify(listed)).not.toContain(issued.key);
    expect((await h.http().get('/v1/profile/x').set(bearer(issued.key))).status).toBe(403);
  });

  it('accounts create, restrict and unrestrict change what the API answers', async () => {
    const account = await json('accounts', 'create', '--name', 'cli-acme', '--plan', 'pro');
    expect(account).toMatchObject({ id: expect.stringMatching(/^acct_/), name: 'cli-acme', plan: 'pro', restricted: false });
    const { key } = await json('keys', 'create', '--account', 'cli-acme', '--env', 'test');
    expect(await json('accounts', 'restrict', 'cli-acme')).toMatchObject({ restricted: true });
    await eventually(async () => (await h.http().get('/v1/profile/x').set(bearer(key))).status === 403, 2500);
    expect(await json('accounts', 'unrestrict', account.id)).toMatchObject({ restricted: false });
    await eventually(async () => (await h.http().get('/v1/profile/x').set(bearer(key))).status === 404, 2500);
  });

  it('keys revoke and delete take the printed id and refuse the key within 2 s', async () => {
    const a = await json('keys', 'create', '--account', 'cli-revoke', '--env', 'test');
    const b = await json('keys', 'create', '--account', 'cli-revoke', '--env', 'test');
    expect((await h.http().get('/v1/profile/x').set(bearer(a.key))).status).toBe(404);
    expect((await h.http().get('/v1/profile/x').set(bearer(b.key))).status).toBe(404);
    expect(await json('keys', 'revoke', a.id)).toMatchObject({ id: a.id, status: 'revoked' });
    expect(await json('keys', 'delete', b.id)).toMatchObject({ id: b.id, status: 'deleted' });
    await eventually(async () => (await h.http().get('/v1/profile/x').set(bearer(a.key))).status === 401, 2500);
    await eventually(async () => (await h.http().get('/v1/profile/x').set(bearer(b.key))).status === 401, 2500);
    const listed = await json('keys', 'list', '--account', 'cli-revoke');
    expect(listed.data.map((k: { id: string; status: string }) => [k.id, k.status])).toEqual([[a.id, 'revoked']]);
  });

  it('keys rotate prints the new key in the create shape; the old key works until the grace ends', async () => {
    const old = await json('keys', 'create', '--account', 'cli-rotate', '--env', 'test', '--scopes', 'profile,context');
    const rotated = await json('keys', 'rotate', old.id, '--grace', '2s');
    expect(Object.keys(rotated).sort()).toEqual(['account', 'createdAt', 'environment', 'id', 'key', 'scopes']);
    expect(rotated).toMatchObject({ account: 'cli-rotate', environment: 'test', scopes: ['profile', 'context'] });
    expect(rotated.id).not.toBe(old.id);
    expect((await h.http().get('/v1/profile/x').set(bearer(old.key))).status).toBe(404);
    expect((await h.http().get('/v1/profile/x').set(bearer(rotated.key))).status).toBe(404);
    await eventually(async () => (await h.http().get('/v1/profile/x').set(bearer(old.key))).status === 401, 5000);
    expect((await h.http().get('/v1/profile/x').set(bearer(rotated.key))).status).toBe(404);
  });

  it.each([
    [['keys', 'create', '--env', 'test'], /--account is required/],
    [['keys', 'create', '--account', 'a', '--env', 'prod'], /invalid --env/],
    [['keys', 'create', '--account', 'a', '--env', 'test', '--scopes', 'admin'], /invalid --scopes/],
    [['keys', 'rotate', 'key_nope'], /no active key/],
    [['keys', 'rotate', 'key_nope', '--grace', 'soon'], /invalid --grace/],
    [['keys', 'revoke', 'key_nope'], /no key/],
    [['accounts', 'restrict', 'nobody'], /no account/],
    [['accounts', 'create', '--name', 'x', '--plan', 'gold'], /invalid --plan/],
    [['bogus', 'command'], /unknown command "bogus command"/],
  ])('fails with a non-zero exit and a message for %j', async (argv, message) => {
    const result = await cli(...argv);
    expect(result.code).not.toBe(0);
    expect(result.err).toMatch(message);
    expect(result.out).toBe('');
  });

  it('refuses to rotate an expired key and keeps the first revocation time', async () => {
    const old = await json('keys', 'create', '--account', 'cli-expired', '--env', 'test');
    await json('keys', 'rotate', old.id, '--grace', '1s');
    await new Promise((r) => setTimeout(r, 1100));
    const again = await cli('keys', 'rotate', old.id);
    expect(again.code).not.toBe(0);
    expect(again.err).toMatch(/no active key/);
    const other = await json('keys', 'create', '--account', 'cli-expired', '--env', 'test');
    const first = await json('keys', 'revoke', other.id);
    await new Promise((r) => setTimeout(r, 20));
    expect((await json('keys', 'revoke', other.id)).revokedAt).toBe(first.revokedAt);
  });

  it('prints a one-line error for an unknown command', async () => {
    const result = await cli('frobnicate');
    expect(result.code).toBe(2);
    expect(result.err.trim().split('\n')).toHaveLength(1);
  });

  it('runs as the built `cos` binary with exit codes and one-line errors', () => {
    const bin = path.join(__dirname, '../../dist/cli/main.js');
    const ok = spawnSync(process.execPath, [bin, 'keys', 'create', '--account', 'cli-bin', '--env', 'test', '--json'], {
      env: h.env.processEnv(),
      encoding: 'utf8',
    });
    expect(ok.status).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ account: 'cli-bin', environment: 'test' });
    const bad = spawnSync(process.execPath, [bin, 'keys', 'revoke', 'key_missing'], { env: h.env.processEnv(), encoding: 'utf8' });
    expect(bad.status).not.toBe(0);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stdout).toBe('');
    // A misspelt flag is refused before anything runs, not read as the default month.
    const misspelt = spawnSync(process.execPath, [bin, 'usage', '--account', 'cli-bin', '--mnth', '2026-01'], {
      env: h.env.processEnv(),
      encoding: 'utf8',
    });
    expect(misspelt).toMatchObject({ status: 2, stdout: '' });
    expect(misspelt.stderr).toBe('cos usage: unknown flag --mnth (did you mean --month?); run cos usage --help\n');
  });
  it("writes the key commands to the account's audit log as the operator's, without a country", async () => {
    const created = await json('keys', 'create', '--account', 'cli-audited', '--env', 'live');
    const rotated = await json('keys', 'rotate', created.id);
    await json('keys', 'revoke', rotated.id);
    await json('keys', 'delete', created.id);
    const account = (await json('accounts', 'list')).data.find((a: { name: string }) => a.name === 'cli-audited');
    const entries = await listAudit(h.env.db, account.id, 10);
    expect(entries.map((e) => [e.action, e.keyId])).toEqual([
      ['key.delete', created.id],
      ['key.revoke', rotated.id],
      ['key.rotate', created.id],
      ['key.create', created.id],
    ]);
    for (const entry of entries) expect(entry).toMatchObject({ actor: 'operator (cli)', environment: 'live', country: null });
  });
});

describe('plans through the CLI', () => {
  const fails = async (argv: string[], message: RegExp) => {
    const result = await cli(...argv);
    expect(result.code).not.toBe(0);
    expect(result.err.trim().split('\n')).toHaveLength(1);
    expect(result.err).toMatch(message);
    return result;
  };

  it('refuses a rate limit on a test key; the operator may raise a live key above its plan', async () => {
    await fails(['keys', 'create', '--account', 'cli-plan-test', '--env', 'test', '--rps', '5'], /Test keys have no rate limit/);
    const fast = await json('keys', 'create', '--account', 'cli-plan-test', '--env', 'live', '--rps', '500');
    expect((await json('keys', 'list', '--account', 'cli-plan-test')).data).toEqual([expect.objectContaining({ id: fast.id })]);
    const res = await h.http().get('/v1/profile/x').set(bearer(fast.key));
    expect(res.headers['x-ratelimit-limit']).toBe('500');
  });

  it('set-plan changes the limits the API applies, clamps overrides on a downgrade and caps live keys', async () => {
    const key = await json('keys', 'create', '--account', 'cli-plan', '--env', 'live', '--rps', '80');
    const pro = await json('accounts', 'set-plan', 'cli-plan', 'pro');
    expect(pro).toMatchObject({
      name: 'cli-plan',
      plan: 'pro',
      liveKeyCap: 25,
      limits: { perSecond: 100, perMonth: 1_000_000 },
      clampedKeys: 0,
    });
    // Within about 2 s every API instance applies the new plan (its quota shows on a refused request's headers).
    const starter = await cli('accounts', 'set-plan', 'cli-plan', 'starter', '--json');
    expect(starter.code).toBe(0);
    expect(JSON.parse(starter.out)).toMatchObject({ plan: 'starter', liveKeyCap: 5, clampedKeys: 1 });
    const listed = await json('keys', 'list', '--account', 'cli-plan');
    expect(listed.data).toEqual([expect.objectContaining({ id: key.id, rateLimitRps: 10 })]);
    await eventually(async () => (await h.http().get('/v1/profile/x').set(bearer(key.key))).headers['x-ratelimit-limit'] === '10');
    // Five live keys at most on starter (one exists); the sixth is refused with a one-line reason.
    for (let i = 0; i < 4; i++) await json('keys', 'create', '--account', 'cli-plan', '--env', 'live');
    await fails(['keys', 'create', '--account', 'cli-plan', '--env', 'live'], /The starter plan allows 5 live keys at once/);
    await fails(['accounts', 'set-plan', 'cli-plan', 'pro', '--live-keys', '50'], /--live-keys is for enterprise accounts/);
    await fails(['accounts', 'set-plan', 'cli-plan', 'platinum'], /invalid --plan/);
    // Enterprise: the operator sets the cap; going below the keys held warns, and refuses new ones.
    const enterprise = await cli('accounts', 'set-plan', 'cli-plan', 'enterprise', '--live-keys', '3', '--json');
    expect(enterprise.code).toBe(0);
    expect(JSON.parse(enterprise.out)).toMatchObject({ plan: 'enterprise', liveKeyCap: 3, limits: { perMonth: null } });
    expect(enterprise.err).toMatch(/holds 5 live keys, more than the 3 allowed/);
    await fails(['keys', 'create', '--account', 'cli-plan', '--env', 'live'], /The enterprise plan allows 3 live keys at once/);
    expect((await json('accounts', 'list')).data).toContainEqual(
      expect.objectContaining({ name: 'cli-plan', plan: 'enterprise', liveKeyCap: 3 }),
    );
  });
});
