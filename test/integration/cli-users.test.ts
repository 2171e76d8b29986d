import { runCliCaptured } from '../support/cli';
import { startHarness, type Harness } from '../support/harness';
import { verifyPassword } from '../../shared/dashboard-users/password';
import { findUserForSignIn } from '../../shared/dashboard-users/user.repository';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  await h.keys.create({ account: 'users-acme', environment: 'test' });
  await h.keys.create({ account: 'users-other', environment: 'test' });
});
afterAll(() => h.close());

const cli = (argv: string[], stdin = '') => runCliCaptured(argv, h.env.processEnv(), stdin);
const json = async (argv: string[], stdin = '') => {
  const result = await cli([...argv, '--json'], stdin);
  expect(result).toMatchObject({ code: 0, err: '' });
  return JSON.parse(result.out);
};
const storedHash = async (email: string) => (await findUserForSignIn(h.env.db, email))!.passwordHash;

describe('cos users', () => {
  it('create prints a generated password once, stores only its argon2id hash and defaults to viewer', async () => {
    const created = await json(['users', 'create', '--account', 'users-acme', '--email', 'Ana@Example.com']);
    expect(created).toMatchObject({ email: 'ana@example.com', role: 'viewer', account: 'users-acme' });
    expect(created.password).toMatch(/^[0-9A-Za-z]{24}$/);
    const hash = await storedHash('ana@example.com');
    expect(hash).toMatch(/^\$argon2id\$/);
    expect(hash).not.toContain(created.password);
    expect(await verifyPassword(hash, created.password)).toBe(true);
    const listed = await json(['users', 'list', '--account', 'users-acme']);
    expect(JSON.stringify(listed)).not.toContain(created.password);
    expect(listed.data).toEqual([expect.objectContaining({ email: 'ana@example.com', role: 'viewer' })]);
  });

  it('create --password-stdin takes the password from standard input and does not print it', async () => {
    const result = await cli(
      ['users', 'create', '--account', 'users-acme', '--email', 'owner@example.com', '--role', 'owner', '--password-stdin'],
      'correct horse battery staple\n',
    );
    expect(result).toMatchObject({ code: 0, err: '' });
    expect(result.out).not.toContain('correct horse');
    expect(await verifyPassword(await storedHash('owner@example.com'), 'correct horse battery staple')).toBe(true);
  });

  it('refuses a duplicate email, a short password, an unknown role or account with exit code 2', async () => {
    const dup = await cli(['users', 'create', '--account', 'users-other', '--email', 'ANA@example.com']);
    expect(dup).toMatchObject({ code: 2, err: expect.stringContaining('already exists') });
    const short = await cli(['users', 'create', '--account', 'users-acme', '--email', 's@example.com', '--password-stdin'], 'short\n');
    expect(short).toMatchObject({ code: 2, err: expect.stringContaining('at least 12 characters') });
    const role = await cli(['users', 'create', '--account', 'users-acme', '--email', 'r@example.com', '--role', 'admin']);
    expect(role).toMatchObject({ code: 2, err: expect.stringContaining('--role') });
    const account = await cli(['users', 'create', '--account', 'nobody', '--email', 'n@example.com']);
    expect(account).toMatchObject({ code: 2, err: expect.stringContaining('no account nobody') });
    const email = await cli(['users', 'create', '--account', 'users-acme', '--email', 'cos_sk_test_abc']);
    expect(email).toMatchObject({ code: 2, err: expect.stringContaining('--email') });
    expect((await json(['users', 'list', '--account', 'users-acme'])).data.map((u: { email: string }) => u.email)).toEqual([
      'ana@example.com',
      'owner@example.com',
    ]);
  });

  it('reset-password replaces the hash; delete removes the user', async () => {
    await json(['users', 'create', '--account', 'users-other', '--email', 'bo@example.com']);
    const before = await storedHash('bo@example.com');
    const reset = await json(['users', 'reset-password', 'bo@example.com']);
    const after = await storedHash('bo@example.com');
    expect(after).not.toBe(before);
    expect(await verifyPassword(after, reset.password)).toBe(true);
    expect(await json(['users', 'delete', 'bo@example.com'])).toMatchObject({ email: 'bo@example.com', deleted: true });
    expect(await findUserForSignIn(h.env.db, 'bo@example.com')).toBeNull();
    expect(await cli(['users', 'delete', 'bo@example.com'])).toMatchObject({ code: 2, err: expect.stringContaining('no dashboard user') });
  });
});
