import type { PartitionInfo } from '../shared/db/partitions';
import type { DashboardUser } from '../shared/dashboard-users/user.repository';
import { type Account } from '../shared/accounts/account.repository';
import type { ApiKeyRecord } from '../shared/credentials/key.repository';
import { keyStatus } from '../shared/credentials/key-status';
import type { IssuedKey } from '../shared/credentials/key.service';
import { liveKeyCap } from '../shared/limits/plans';

/** How commands print what they show: the JSON of --json and the text lines for people. */

export const accountJson = (a: Account) => ({
  id: a.id,
  name: a.name,
  plan: a.plan,
  restricted: a.restricted,
  liveKeyCap: liveKeyCap(a.plan, a.liveKeyLimit),
  createdAt: a.createdAt,
});

export const keyJson = (k: ApiKeyRecord) => ({
  id: k.id,
  name: k.name,
  environment: k.environment,
  last4: k.last4,
  scopes: k.scopes,
  rateLimitRps: k.rateLimitRps,
  status: keyStatus(k),
  createdAt: k.createdAt,
  lastUsedAt: k.lastUsedAt,
  revokedAt: k.revokedAt,
  expiresAt: k.expiresAt,
  rotationDueAt: k.rotationDueAt,
});

/** A new key as `keys create` and `keys rotate` print it: {id, key, account, environment, scopes, createdAt}. */
export const issuedJson = ({ id, key, account, environment, scopes, createdAt }: IssuedKey) => ({
  id,
  key,
  account,
  environment,
  scopes,
  createdAt,
});

export const issuedText = (k: { id: string; key: string; account: string; environment: string; scopes: string[] }) =>
  `${k.key}\n(id ${k.id}, account ${k.account}, ${k.environment}, scopes ${k.scopes.join(',')}) — store it now, it is not shown again`;

export const userJson = (u: DashboardUser, account: string) => ({
  id: u.id,
  email: u.email,
  role: u.role,
  account,
  createdAt: u.createdAt,
  twoFactor: u.twoFactorSince !== null,
});

export const passwordText = (password: string, generated: boolean) =>
  generated ? `\npassword: ${password}\n(store it now, it is not shown again)` : '';

export const partitionJson = (p: PartitionInfo) => ({
  table: p.table,
  name: p.name,
  month: p.month,
  state: p.state,
  estimatedRows: p.estimatedRows,
  bytes: p.bytes,
});

export const partitionText = (p: PartitionInfo) =>
  `${p.name}  ${p.table}  ${p.month ?? 'default'}  ${p.state}  ~${p.estimatedRows} rows  ${(p.bytes / 1_048_576).toFixed(1)} MiB`;
