import { z } from 'zod';
import { generatePassword, newPasswordSchema } from '../shared/dashboard-users/password';
import type { Db } from '../shared/db/database';
import { findAccount, type Account } from '../shared/accounts/account.repository';
import { UsageError } from './command';

/** Reading the values of flags and arguments; a value that does not fit is a usage error naming the flag. */

export function parseWith<T>(schema: z.ZodType<T>, value: unknown, flag: string): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new UsageError(`invalid --${flag}: ${result.error.issues.map((i) => i.message).join('; ')}`);
  return result.data;
}

export async function requireAccount(db: Db, ref: string): Promise<Account> {
  const account = await findAccount(db, ref);
  if (!account) throw new UsageError(`no account ${ref}`);
  return account;
}

/** `--since`: a date (from 00:00 UTC) or an ISO datetime with Z or an offset. */
export function parseSince(value: string): Date {
  const schema = /^\d{4}-\d{2}-\d{2}$/.test(value) ? z.iso.date() : z.iso.datetime({ offset: true });
  if (!schema.safeParse(value).success) {
    throw new UsageError(`invalid --since: "${value}" is not a date like 2026-11-01 or a datetime like 2026-11-01T09:30:00Z`);
  }
  return new Date(value); // a date-only ISO string is read as UTC midnight
}

/** The password given on stdin (one line; the newline is not part of it), or a generated one. */
export async function newPassword(fromStdin: boolean, readInput: () => Promise<string>): Promise<{ password: string; generated: boolean }> {
  if (!fromStdin) return { password: generatePassword(), generated: true };
  const text = (await readInput()).replace(/\r?\n$/, '');
  return { password: parseWith(newPasswordSchema, text, 'password-stdin'), generated: false };
}
