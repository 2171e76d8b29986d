import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { Db } from '../shared/db/database';
import { generatePassword, hashPassword, verifyPassword } from '../shared/dashboard-users/password';
import { createUser, findUserForSignIn, setPasswordHash } from '../shared/dashboard-users/user.repository';
import { findOrCreateAccount } from '../shared/accounts/account.repository';

export const DEMO_EMAIL = 'demo@example.com';

/**
 * The demo account's dashboard owner for `npm start`. Its password is generated once and kept
 * in `file` (like the demo key), and replaced only when it no longer signs in.
 */
export async function demoLogin(db: Db, file: string): Promise<{ email: string; password: string }> {
  const user = await findUserForSignIn(db, DEMO_EMAIL);
  if (user && existsSync(file)) {
    const saved = readFileSync(file, 'utf8').trim();
    if (await verifyPassword(user.passwordHash, saved)) return { email: DEMO_EMAIL, password: saved };
  }
  const password = generatePassword();
  const passwordHash = await hashPassword(password);
  if (user) await setPasswordHash(db, DEMO_EMAIL, passwordHash);
  else {
    const account = await findOrCreateAccount(db, 'demo');
    await createUser(db, { accountId: account.id, email: DEMO_EMAIL, role: 'owner', passwordHash });
  }
  writeFileSync(file, password, { mode: 0o600 });
  return { email: DEMO_EMAIL, password };
}
