import { z } from 'zod';
import { generatePassword, hashPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../shared/dashboard/password';
import {
  createUser,
  deleteUser,
  emailSchema,
  listUsers,
  roleSchema,
  setPasswordHash,
  type DashboardUser,
} from '../shared/dashboard/user.repository';
import { stringFlag, UsageError, type ParsedArgs } from './args';
import { parseWith, requireAccount, type CommandContext, type CommandOutput } from './commands';

const userJson = (u: DashboardUser, account: string) => ({ id: u.id, email: u.email, role: u.role, account, createdAt: u.createdAt });

const passwordSchema = z
  .string()
  .min(MIN_PASSWORD_LENGTH, `at least ${MIN_PASSWORD_LENGTH} characters`)
  .max(MAX_PASSWORD_LENGTH, `at most ${MAX_PASSWORD_LENGTH} characters`);

/** The password given on stdin (one line; the newline is not part of it), or a generated one. */
async function newPassword(ctx: CommandContext): Promise<{ password: string; generated: boolean }> {
  if (!ctx.args.flags.get('password-stdin')) return { password: generatePassword(), generated: true };
  const text = (await ctx.readInput()).replace(/\r?\n$/, '');
  return { password: parseWith(passwordSchema, text, 'password-stdin'), generated: false };
}

function emailArg(args: ParsedArgs, value: string | undefined): string {
  if (value === undefined) throw new UsageError('missing email');
  return parseWith(emailSchema, value, args.flags.has('email') ? 'email' : 'email argument');
}

const passwordText = (password: string, generated: boolean) =>
  generated ? `\npassword: ${password}\n(store it now, it is not shown again)` : '';

/** Dashboard users: each belongs to one account, as owner (changes keys) or viewer (reads). */
export const USER_COMMANDS: Record<string, (ctx: CommandContext) => Promise<CommandOutput>> = {
  'users create': async (ctx) => {
    const { db, args } = ctx;
    const account = await requireAccount(db, stringFlag(args, 'account', true));
    const email = emailArg(args, stringFlag(args, 'email', true));
    const role = parseWith(roleSchema, stringFlag(args, 'role') ?? 'viewer', 'role');
    const { password, generated } = await newPassword(ctx);
    const user = await createUser(db, { accountId: account.id, email, role, passwordHash: await hashPassword(password) });
    if (!user) throw new UsageError(`a dashboard user ${email} already exists`);
    return {
      json: { ...userJson(user, account.name), ...(generated ? { password } : {}) },
      text: `created ${user.role} ${user.email} in account ${account.name}${passwordText(password, generated)}`,
    };
  },
  'users list': async ({ db, args }) => {
    const account = await requireAccount(db, stringFlag(args, 'account', true));
    const users = await listUsers(db, account.id);
    return {
      json: { data: users.map((u) => userJson(u, account.name)) },
      text: users.map((u) => `${u.email}  ${u.role}  created ${u.createdAt}`).join('\n') || '(no users)',
    };
  },
  'users delete': async ({ db, args }) => {
    const email = emailArg(args, args.positionals[2]);
    const user = await deleteUser(db, email);
    if (!user) throw new UsageError(`no dashboard user ${email}`);
    return { json: { id: user.id, email: user.email, deleted: true }, text: `deleted ${user.email}; their sessions end at once` };
  },
  'users reset-password': async (ctx) => {
    const email = emailArg(ctx.args, ctx.args.positionals[2]);
    const { password, generated } = await newPassword(ctx);
    const user = await setPasswordHash(ctx.db, email, await hashPassword(password));
    if (!user) throw new UsageError(`no dashboard user ${email}`);
    return {
      json: { id: user.id, email: user.email, ...(generated ? { password } : {}) },
      text: `new password set for ${user.email}${passwordText(password, generated)}`,
    };
  },
};
