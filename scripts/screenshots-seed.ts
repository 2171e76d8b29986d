import { sql } from 'kysely';
import type { Db } from '../shared/db/database';
import { hashPassword } from '../shared/dashboard-users/password';
import { createUser } from '../shared/dashboard-users/user.repository';
import { createAccount } from '../shared/accounts/account.repository';
import { touchLastUsed, updateKey } from '../shared/credentials/key.repository';
import { KeyService } from '../shared/credentials/key.service';

export const SCREENSHOT_PASSWORD = 'screenshots only, never used elsewhere';
const DAY = 86_400_000;

export interface ScreenshotAccount {
  owner: string;
  viewer: string;
  accountId: string;
  /** Keys that send traffic: the test key, the live key rotating out, its replacement and a second live key. */
  keys: { checkout: SeededKey; productionOld: SeededKey; production: SeededKey; batch: SeededKey };
}
export interface SeededKey {
  id: string;
  key: string;
}

/** An account that shows every state a key can be in: fresh, used, old, rotating, revoked. */
export async function seedScreenshotAccount(db: Db, secret: string): Promise<ScreenshotAccount> {
  const account = await createAccount(db, 'acme', 'pro');
  const keys = new KeyService(db, secret);
  const now = Date.now();
  const checkout = await keys.create({ account: account.id, environment: 'test', name: 'checkout web' });
  const legacy = await keys.create({ account: account.id, environment: 'test', name: 'legacy import', scopes: ['outcome'] });
  await sql`update api_keys set created_at = ${new Date(now - 124 * DAY).toISOString()} where id = ${legacy.id}`.execute(db);
  const staging = await keys.create({ account: account.id, environment: 'test', name: 'old staging' });
  await updateKey(db, staging.id, { revoked_at: new Date(now - 3 * DAY) });
  const production = await keys.create({ account: account.id, environment: 'live', name: 'production' });
  const batch = await keys.create({
    account: account.id,
    environment: 'live',
    name: 'batch jobs',
    scopes: ['outcome', 'profile'],
    rateLimitRps: 200,
  });
  const rotated = await keys.rotate(production.id, DAY);
  await touchLastUsed(
    db,
    new Map([
      [checkout.id, new Date(now - 5 * 60_000)],
      [legacy.id, new Date(now - 2 * DAY)],
      [production.id, new Date(now - 60_000)],
    ]),
  );
  const passwordHash = await hashPassword(SCREENSHOT_PASSWORD);
  await createUser(db, { accountId: account.id, email: 'jane@acme.example', role: 'owner', passwordHash });
  await createUser(db, { accountId: account.id, email: 'sam@acme.example', role: 'viewer', passwordHash });
  return {
    owner: 'jane@acme.example',
    viewer: 'sam@acme.example',
    accountId: account.id,
    keys: { checkout, productionOld: production, production: rotated, batch },
  };
}
