import { z } from 'zod';
import { parseDuration } from '../shared/config/duration';
import { emailSchema } from '../shared/dashboard-users/email';
import { hashPassword } from '../shared/dashboard-users/password';
import {
  createUser,
  deleteUser,
  findUserForSignIn,
  listUsers,
  roleSchema,
  ROLES,
  setPasswordHash,
} from '../shared/dashboard-users/user.repository';
import { deleteSessions } from '../shared/dashboard-users/sessions.repository';
import { disableTwoFactor } from '../shared/dashboard-users/two-factor.repository';
import { recordAudit } from '../shared/audit/audit.repository';
import type { Db } from '../shared/db/database';
import type { CliConfig } from '../shared/config/config';
import { detachPartitionsBefore, listPartitions, MONTH_PATTERN } from '../shared/db/partitions';
import { ENVIRONMENTS, environmentSchema } from '../shared/domain/environment';
import { evaluationJson, evaluationText } from '../shared/evaluation/evaluation-report';
import { evaluateTenant } from '../shared/evaluation/evaluation.service';
import { EVENTS_QUEUE, MAINTENANCE_QUEUE, WEBHOOKS_QUEUE } from '../shared/jobs/catalog';
import { createAccount, findAccount, listAccounts } from '../shared/accounts/account.repository';
import { changeRestriction } from '../shared/accounts/account-restriction';
import { scopeSchema, SCOPES } from '../shared/credentials/api-key';
import { listKeys } from '../shared/credentials/key.repository';
import { keyStatus } from '../shared/credentials/key-status';
import { KeyService } from '../shared/credentials/key.service';
import { changePlan } from '../shared/accounts/plan-change';
import { startOfMonth, utcMonth } from '../shared/util/calendar';
import { PLAN_LIMITS, planSchema, PLANS } from '../shared/limits/plans';
import { resetTestData } from '../shared/test-data/test-data-reset';
import { flushUsage } from '../shared/usage/usage-flush';
import { monthlyTotals, usageForMonth } from '../shared/usage/usage.repository';
import { command, UsageError, type Command } from './command';
import { announce, publish, withQueues, withRedis, type QueueName } from './connections';
import { KeyLifecycle } from '../shared/credentials/key-lifecycle';
import { OPERATOR } from './operator';
import { WEBHOOK_COMMANDS } from './webhook-commands';
import { newPassword, parseSince, parseWith, requireAccount } from './flag-values';
import { accountJson, issuedJson, issuedText, keyJson, partitionJson, partitionText, passwordText, userJson } from './output';

/*
 * The CLI's one command table: each command's name, summary, arguments, flags and handler,
 * declared once. The parser (command-line.ts) and `cos --help` (help.ts) both read it, and
 * docs/OPERATIONS.md shows the help it makes.
 */

const ACCOUNT = { name: 'account', value: 'N', description: 'the account, by name or id' } as const;
const KEY_ID = { name: 'id', value: 'ID', description: 'the key id (key_…) that keys list and keys create print' } as const;
const EMAIL = { name: 'email', value: 'E', description: "the dashboard user's email" } as const;
const accountFlag = { type: 'string', value: 'N', description: 'the account, by name or id', required: true } as const;
const envFlag = { type: 'string', value: ENVIRONMENTS.join('|'), description: 'the environment', required: true } as const;
const queueFlag = {
  type: 'string',
  value: `${EVENTS_QUEUE}|${MAINTENANCE_QUEUE}|${WEBHOOKS_QUEUE}`,
  description: 'the queue (the events queue counts every partition)',
  default: EVENTS_QUEUE,
} as const;
const passwordStdinFlag = {
  type: 'boolean',
  description: 'read the password from the first line of stdin instead of generating one',
} as const;
const MONTH = z.string().regex(MONTH_PATTERN, 'use YYYY-MM');

export const COMMANDS: readonly Command[] = [
  command({
    name: 'accounts create',
    summary: 'create an account',
    flags: {
      name: { type: 'string', value: 'N', description: "the account's name", required: true },
      plan: { type: 'string', value: PLANS.join('|'), description: 'its plan', default: 'starter' },
    },
    run: async ({ db, flags }) => {
      const plan = parseWith(planSchema, flags.plan, 'plan');
      if (await findAccount(db, flags.name)) throw new UsageError(`account ${flags.name} already exists`);
      const account = await createAccount(db, flags.name, plan);
      return { json: accountJson(account), text: `created account ${account.name} (${account.id}, plan ${account.plan})` };
    },
  }),
  command({
    name: 'accounts list',
    summary: 'list every account with its plan',
    flags: {},
    run: async ({ db }) => {
      const accounts = await listAccounts(db);
      return {
        json: { data: accounts.map(accountJson) },
        text: accounts.map((a) => `${a.id}  ${a.name}  ${a.plan}${a.restricted ? '  restricted' : ''}`).join('\n') || '(no accounts)',
      };
    },
  }),
  command({
    name: 'accounts set-plan',
    summary: "move an account to a plan; a downgrade lowers keys' rate limits above the new plan's",
    positionals: [ACCOUNT, { name: 'plan', value: PLANS.join('|'), description: 'the new plan' }],
    flags: {
      'live-keys': { type: 'string', value: 'K', description: "an enterprise account's cap on live keys" },
    },
    run: async ({ db, args, flags }) => {
      const account = await requireAccount(db, args.account);
      const plan = parseWith(planSchema, args.plan, 'plan');
      const liveKeysFlag = flags['live-keys'];
      if (liveKeysFlag !== undefined && plan !== 'enterprise') {
        throw new UsageError(`--live-keys is for enterprise accounts; the ${plan} plan allows ${PLAN_LIMITS[plan].liveKeys}`);
      }
      const liveKeyLimit = liveKeysFlag === undefined ? null : parseWith(z.coerce.number().int().min(0), liveKeysFlag, 'live-keys');
      const changed = await changePlan(db, account, plan, liveKeyLimit);
      const limits = { perSecond: PLAN_LIMITS[plan].perSecond, perMonth: PLAN_LIMITS[plan].perMonth, liveKeys: changed.liveKeyCap };
      const notes = [
        changed.clampedKeys > 0 ? `${changed.clampedKeys} key rate limits lowered to ${limits.perSecond}/s` : '',
        changed.liveKeys > changed.liveKeyCap
          ? `the account holds ${changed.liveKeys} live keys, more than the ${changed.liveKeyCap} allowed: they keep working, but no new one can be created until fewer remain`
          : '',
      ].filter(Boolean);
      return {
        json: {
          ...accountJson({ ...account, plan, liveKeyLimit }),
          limits,
          clampedKeys: changed.clampedKeys,
        },
        text: `account ${account.name} is now on the ${plan} plan (${limits.perSecond}/s per key, ${
          limits.perMonth === null ? 'no monthly quota' : `${limits.perMonth} requests a month`
        }, ${limits.liveKeys} live keys)`,
        warning: notes.length > 0 ? notes.join('; ') : undefined,
      };
    },
  }),
  command({
    name: 'accounts restrict',
    summary: 'refuse every key of an account (403 ACCOUNT_RESTRICTED)',
    positionals: [ACCOUNT],
    flags: {},
    run: async ({ db, config, args }) => {
      const account = await requireAccount(db, args.account);
      await changeRestriction(db, account, true);
      const warning = await announce(config, { type: 'account', accountId: account.id, restricted: true });
      return { json: accountJson({ ...account, restricted: true }), text: `account ${account.name} is restricted`, warning };
    },
  }),
  command({
    name: 'accounts unrestrict',
    summary: "accept an account's keys again",
    positionals: [ACCOUNT],
    flags: {},
    run: async ({ db, config, args }) => {
      const account = await requireAccount(db, args.account);
      await changeRestriction(db, account, false);
      const warning = await announce(config, { type: 'account', accountId: account.id, restricted: false });
      return { json: accountJson({ ...account, restricted: false }), text: `account ${account.name} is no longer restricted`, warning };
    },
  }),
  command({
    name: 'keys create',
    summary: 'issue a key and print it once; creates the account (plan starter) when it does not exist',
    flags: {
      account: accountFlag,
      env: envFlag,
      name: { type: 'string', value: 'LABEL', description: 'a label for the key' },
      scopes: { type: 'string', value: SCOPES.join(','), description: 'what the key may call, comma-separated (default all)' },
      rps: { type: 'string', value: 'R', description: "the key's requests per second, replacing its plan's (live keys only)" },
    },
    run: async ({ db, config, flags }) => {
      const { result: issued } = await keyLifecycle(db, config).create(
        {
          account: flags.account,
          environment: parseWith(environmentSchema, flags.env, 'env'),
          name: flags.name,
          scopes:
            flags.scopes === undefined
              ? undefined
              : parseWith(
                  z.array(scopeSchema).min(1),
                  flags.scopes
                    .split(',')
                    .map((s) => s.trim())
                    .filter(Boolean),
                  'scopes',
                ),
          rateLimitRps: flags.rps === undefined ? null : parseWith(z.coerce.number().int().positive(), flags.rps, 'rps'),
        },
        OPERATOR,
      );
      return { json: issuedJson(issued), text: issuedText(issued) };
    },
  }),
  command({
    name: 'keys list',
    summary: "list an account's keys (not deleted ones) with their status",
    flags: { account: accountFlag },
    run: async ({ db, flags }) => {
      const account = await requireAccount(db, flags.account);
      const keys = await listKeys(db, account.id);
      return {
        json: { data: keys.map(keyJson) },
        text:
          keys
            .map(
              (k) =>
                `${k.id}  ${k.environment}  …${k.last4}  ${keyStatus(k)}${k.rotationDueAt ? ' (rotation due)' : ''}  ${k.name}  [${k.scopes.join(',')}]`,
            )
            .join('\n') || '(no keys)',
      };
    },
  }),
  command({
    name: 'keys revoke',
    summary: 'revoke a key (idempotent: revoking again keeps the first time)',
    positionals: [KEY_ID],
    flags: {},
    run: async ({ db, config, args }) => {
      const { result: key, warning } = await keyLifecycle(db, config).revoke(args.id, OPERATOR);
      return { json: keyJson(key), text: `revoked ${key.id}`, warning };
    },
  }),
  command({
    name: 'keys delete',
    summary: 'delete a key: refused at once and no longer listed',
    positionals: [KEY_ID],
    flags: {},
    run: async ({ db, config, args }) => {
      const { result: key, warning } = await keyLifecycle(db, config).delete(args.id, OPERATOR);
      return { json: keyJson(key), text: `deleted ${key.id}`, warning };
    },
  }),
  command({
    name: 'keys rotate',
    summary: 'issue a replacement key; the old one works until the grace period ends',
    positionals: [KEY_ID],
    flags: {
      grace: { type: 'string', value: 'DURATION', description: 'how long the old key keeps working, like 30m, 24h or 7d', default: '24h' },
    },
    run: async ({ db, config, args, flags }) => {
      const grace = parseDuration(flags.grace);
      if (grace === null) throw new UsageError(`invalid --grace: "${flags.grace}" is not a duration like 30m, 24h or 7d`);
      const {
        result: { previousKeyExpiresAt, ...issued },
      } = await keyLifecycle(db, config).rotate(args.id, grace, OPERATOR);
      return { json: issuedJson(issued), text: `${issuedText(issued)}\nthe previous key works until ${previousKeyExpiresAt}` };
    },
  }),
  command({
    name: 'test-data reset',
    summary: 'delete the test-environment data now',
    flags: {
      account: { type: 'string', value: 'N', description: "only this account's (by name or id; default every account's)" },
    },
    run: async ({ db, config, flags }) => {
      const account = flags.account === undefined ? undefined : await requireAccount(db, flags.account);
      const result = await withRedis(config, (redis, keys) =>
        resetTestData({ db, redis, keys }, { trigger: 'manual', accountId: account?.id }),
      );
      const scope = account ? `account ${account.name}` : 'all accounts';
      return {
        json: { account: account?.name ?? null, rowsRemoved: result.rowsRemoved },
        text: `test data reset for ${scope}: ${Object.entries(result.rowsRemoved)
          .map(([t, n]) => `${t} ${n}`)
          .join(', ')}`,
      };
    },
  }),
  command({
    name: 'usage',
    summary: "flush metered usage, then print an account's usage of a month per day, key, endpoint and status class",
    flags: {
      account: accountFlag,
      month: { type: 'string', value: 'YYYY-MM', description: 'the month (default the current UTC month)' },
      format: { type: 'string', value: 'json|csv', description: 'the output (default csv, or json with --json)' },
    },
    run: async ({ db, config, flags }) => {
      const account = await requireAccount(db, flags.account);
      const month = parseWith(MONTH, flags.month ?? utcMonth(Date.now()), 'month');
      const format = parseWith(z.enum(['json', 'csv']), flags.format ?? (flags.json ? 'json' : 'csv'), 'format');
      // Flush first so the report includes what is still metered in Redis (flushes are idempotent).
      await withRedis(config, (redis, keys) => flushUsage({ redis, keys, db }));
      const rows = await usageForMonth(db, { accountId: account.id, month });
      const totals = await monthlyTotals(db, { accountId: account.id, month });
      const csv = [
        'day,key_id,endpoint,status_class,count',
        ...rows.map((r) => `${r.day},${r.keyId},${r.endpoint},${r.statusClass},${r.count}`),
      ].join('\n');
      const json = { account: account.name, accountId: account.id, month, totals, data: rows };
      return { json, text: csv, raw: format === 'csv' ? csv : JSON.stringify(json) };
    },
  }),
  command({
    name: 'evaluate',
    summary: "estimate offline the service's mean reward against uniform random and the population's best",
    flags: {
      account: accountFlag,
      env: envFlag,
      since: { type: 'string', value: 'DATE', description: 'only decisions from this date (00:00 UTC) or datetime (Z or an offset) on' },
    },
    run: async ({ db, flags }) => {
      const account = await requireAccount(db, flags.account);
      const environment = parseWith(environmentSchema, flags.env, 'env');
      const since = flags.since === undefined ? undefined : parseSince(flags.since);
      const result = await evaluateTenant(db, { accountId: account.id, environment }, since);
      const report = { account, environment, since, ...result };
      return { json: evaluationJson(report), text: evaluationText(report) };
    },
  }),
  command({
    name: 'jobs failed',
    summary: "print a queue's job counts and its most recent failed (parked) jobs",
    flags: {
      queue: queueFlag,
      limit: { type: 'string', value: 'N', description: 'at most this many jobs, 1 to 1000', default: '50' },
    },
    run: async ({ config, flags }) => {
      const limit = parseWith(z.coerce.number().int().min(1).max(1000), flags.limit, 'limit');
      return withQueues(config, queueName(flags.queue), async (queues) => {
        const jobs = (await Promise.all(queues.map((queue) => queue.getFailed(0, limit - 1))))
          .flat()
          .sort((a, b) => (b.finishedOn ?? 0) - (a.finishedOn ?? 0))
          .slice(0, limit);
        const counts: Record<string, number> = {};
        for (const partition of await Promise.all(
          queues.map((queue) => queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed')),
        )) {
          for (const [state, count] of Object.entries(partition)) counts[state] = (counts[state] ?? 0) + count;
        }
        const data = jobs.map((job) => ({
          id: job.id,
          name: job.name,
          attemptsMade: job.attemptsMade,
          failedReason: job.failedReason,
          finishedOn: job.finishedOn,
        }));
        return {
          json: { counts, data },
          text: [
            `counts: ${JSON.stringify(counts)}`,
            ...data.map((j) => `${j.id}  ${j.name}  attempts=${j.attemptsMade}  ${j.failedReason}`),
          ].join('\n'),
        };
      });
    },
  }),
  command({
    name: 'jobs retry-failed',
    summary: 'move every failed job of a queue back to it',
    flags: { queue: queueFlag },
    run: async ({ config, flags }) =>
      withQueues(config, queueName(flags.queue), async (queues) => {
        const failed = (await Promise.all(queues.map((queue) => queue.getFailed(0, -1)))).flat();
        await Promise.all(failed.map((job) => job.retry('failed')));
        return { json: { retried: failed.length }, text: `retried ${failed.length} failed jobs` };
      }),
  }),
  command({
    name: 'users create',
    summary: 'add a dashboard user to an account and print a generated password once',
    flags: {
      account: accountFlag,
      email: { type: 'string', value: 'E', description: 'their email, which they sign in with', required: true },
      role: { type: 'string', value: ROLES.join('|'), description: 'owners change keys, viewers read', default: 'viewer' },
      'password-stdin': passwordStdinFlag,
    },
    run: async ({ db, flags, readInput }) => {
      const account = await requireAccount(db, flags.account);
      const email = parseWith(emailSchema, flags.email, 'email');
      const role = parseWith(roleSchema, flags.role, 'role');
      const { password, generated } = await newPassword(flags['password-stdin'], readInput);
      const user = await createUser(db, { accountId: account.id, email, role, passwordHash: await hashPassword(password) });
      if (!user) throw new UsageError(`a dashboard user ${email} already exists`);
      return {
        json: { ...userJson(user, account.name), ...(generated ? { password } : {}) },
        text: `created ${user.role} ${user.email} in account ${account.name}${passwordText(password, generated)}`,
      };
    },
  }),
  command({
    name: 'users list',
    summary: "list an account's dashboard users",
    flags: { account: accountFlag },
    run: async ({ db, flags }) => {
      const account = await requireAccount(db, flags.account);
      const users = await listUsers(db, account.id);
      return {
        json: { data: users.map((u) => userJson(u, account.name)) },
        text:
          users.map((u) => `${u.email}  ${u.role}  created ${u.createdAt}${u.twoFactorSince ? '  2fa' : ''}`).join('\n') || '(no users)',
      };
    },
  }),
  command({
    name: 'users delete',
    summary: 'remove a dashboard user; their sessions end at once',
    positionals: [EMAIL],
    flags: {},
    run: async ({ db, args }) => {
      const email = parseWith(emailSchema, args.email, 'email argument');
      const user = await deleteUser(db, email);
      if (!user) throw new UsageError(`no dashboard user ${email}`);
      return { json: { id: user.id, email: user.email, deleted: true }, text: `deleted ${user.email}; their sessions end at once` };
    },
  }),
  command({
    name: 'users reset-password',
    summary: "set a dashboard user's new password (printed once when generated); their sessions end",
    positionals: [EMAIL],
    flags: { 'password-stdin': passwordStdinFlag },
    run: async ({ db, args, flags, readInput }) => {
      const email = parseWith(emailSchema, args.email, 'email argument');
      const { password, generated } = await newPassword(flags['password-stdin'], readInput);
      const user = await setPasswordHash(db, email, await hashPassword(password));
      if (!user) throw new UsageError(`no dashboard user ${email}`);
      return {
        json: { id: user.id, email: user.email, ...(generated ? { password } : {}) },
        text: `new password set for ${user.email}${passwordText(password, generated)}`,
      };
    },
  }),
  command({
    name: 'users reset-2fa',
    summary: "turn off a dashboard user's two-factor sign-in (a lost phone and recovery codes); their sessions end",
    flags: { email: { type: 'string', value: 'E', description: "the dashboard user's email", required: true } },
    run: async ({ db, flags }) => {
      const email = parseWith(emailSchema, flags.email, 'email');
      const user = await findUserForSignIn(db, email);
      if (!user) throw new UsageError(`no dashboard user ${email}`);
      const wasOn = await disableTwoFactor(db, user.id);
      // Whoever held the phone may be signed in: every session of the user ends with it.
      const ended = await deleteSessions(db, { userId: user.id });
      await recordAudit(db, {
        accountId: user.accountId,
        actor: OPERATOR.name,
        action: 'two-factor.reset',
        subject: user.email,
        country: null,
      });
      return {
        json: { id: user.id, email: user.email, twoFactorWasOn: wasOn, sessionsEnded: ended },
        text: wasOn
          ? `two-factor sign-in reset for ${user.email}: they sign in with their password and may set it up again; ${ended} sessions ended`
          : `${user.email} did not have two-factor sign-in on; ${ended} sessions ended`,
      };
    },
  }),
  command({
    name: 'partitions list',
    summary: 'list the monthly partitions of decisions, outcomes and profile versions, attached or archived',
    flags: {},
    run: async ({ db }) => {
      const partitions = await listPartitions(db);
      return { json: { data: partitions.map(partitionJson) }, text: partitions.map(partitionText).join('\n') || '(no partitions)' };
    },
  }),
  command({
    name: 'partitions detach',
    summary: 'detach every month before one; each stays in the database as a plain table',
    flags: {
      before: { type: 'string', value: 'YYYY-MM', description: 'the first month kept attached', required: true },
    },
    run: async ({ db, config, flags }) => {
      const before = parseWith(MONTH, flags.before, 'before');
      // A month still taking outcomes (its decisions' window not closed) stays attached.
      const latest = new Date(startOfMonth(Date.now() - config.OUTCOME_WINDOW)).toISOString().slice(0, 7);
      if (before > latest) {
        throw new UsageError(`--before ${before} would detach months still taking outcomes (OUTCOME_WINDOW): use ${latest} or earlier`);
      }
      const detached = await detachPartitionsBefore(db, before);
      return {
        json: { before, detached },
        text: detached.length > 0 ? `detached (kept as plain tables): ${detached.join(', ')}` : `no attached partition before ${before}`,
      };
    },
  }),
  ...WEBHOOK_COMMANDS,
];

const queueName = (value: string): QueueName => parseWith(z.enum([EVENTS_QUEUE, MAINTENANCE_QUEUE, WEBHOOKS_QUEUE]), value, 'queue');

/** The key lifecycle as the operator runs it: changes announced on a Redis connection of their own. */
const keyLifecycle = (db: Db, config: CliConfig) =>
  new KeyLifecycle({ db, keys: new KeyService(db, config.COS_SECRET), announce: (change) => publish(config, change) });
