import { Queue } from 'bullmq';
import { z } from 'zod';
import type { CliConfig } from '../shared/config/config';
import { parseDuration } from '../shared/config/duration';
import type { Db } from '../shared/db/database';
import { environmentSchema } from '../shared/domain/environment';
import { evaluationJson, evaluationText } from '../shared/evaluation/evaluation-report';
import { evaluateTenant } from '../shared/evaluation/evaluation.service';
import { EVENTS_QUEUE, MAINTENANCE_QUEUE } from '../shared/jobs/catalog';
import { createAccount, findAccount, listAccounts, planSchema, setRestricted, type Account } from '../shared/keys/account.repository';
import { scopeSchema } from '../shared/keys/api-key';
import { recordAudit, type AuditAction } from '../shared/dashboard/audit.repository';
import { findKeyById, keyStatus, listKeys, type ApiKeyRecord } from '../shared/keys/key.repository';
import { publishCredentialChange, type CredentialChange } from '../shared/keys/credential-changes.repository';
import { KeyService, type IssuedKey } from '../shared/keys/key.service';
import { changePlan } from '../shared/keys/plan-change';
import { liveKeyCap, PLAN_LIMITS } from '../shared/limits/plans';
import { createRedis, keysFor, redisTarget } from '../shared/redis/redis';
import { utcMonth } from '../shared/limits/calendar';
import { resetTestData } from '../shared/test-data/test-data-reset';
import { flushUsage } from '../shared/usage/usage-flush';
import { monthlyTotals, usageForMonth } from '../shared/usage/usage.repository';
import { stringFlag, UsageError, type ParsedArgs } from './args';

export interface CommandContext {
  db: Db;
  config: CliConfig;
  args: ParsedArgs;
  /** Everything on standard input (read only by commands that ask for it, like --password-stdin). */
  readInput: () => Promise<string>;
}

/** A command returns the JSON object it prints (and a text rendering for humans). */
export interface CommandOutput {
  json: unknown;
  text: string;
  /** Printed as is, even with --json (e.g. `usage --format csv`). */
  raw?: string;
  /** Printed on stderr: the command did its work, with a caveat. */
  warning?: string;
}

const accountJson = (a: Account) => ({
  id: a.id,
  name: a.name,
  plan: a.plan,
  restricted: a.restricted,
  liveKeyCap: liveKeyCap(a.plan, a.liveKeyLimit),
  createdAt: a.createdAt,
});

const keyJson = (k: ApiKeyRecord) => ({
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
});

function positional(args: ParsedArgs, index: number, what: string): string {
  const value = args.positionals[index];
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

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
function parseSince(value: string): Date {
  const schema = /^\d{4}-\d{2}-\d{2}$/.test(value) ? z.iso.date() : z.iso.datetime({ offset: true });
  if (!schema.safeParse(value).success) {
    throw new UsageError(`invalid --since: "${value}" is not a date like 2026-11-01 or a datetime like 2026-11-01T09:30:00Z`);
  }
  return new Date(value); // a date-only ISO string is read as UTC midnight
}

/** A new key as `keys create` and `keys rotate` print it: {id, key, account, environment, scopes, createdAt}. */
const issuedJson = ({ id, key, account, environment, scopes, createdAt }: IssuedKey) => ({
  id,
  key,
  account,
  environment,
  scopes,
  createdAt,
});

const issuedText = (k: { id: string; key: string; account: string; environment: string; scopes: string[] }) =>
  `${k.key}\n(id ${k.id}, account ${k.account}, ${k.environment}, scopes ${k.scopes.join(',')}) — store it now, it is not shown again`;

export const COMMANDS: Record<string, (ctx: CommandContext) => Promise<CommandOutput>> = {
  'accounts create': async ({ db, args }) => {
    const name = stringFlag(args, 'name', true);
    const plan = parseWith(planSchema, stringFlag(args, 'plan') ?? 'starter', 'plan');
    if (await findAccount(db, name)) throw new UsageError(`account ${name} already exists`);
    const account = await createAccount(db, name, plan);
    return { json: accountJson(account), text: `created account ${account.name} (${account.id}, plan ${account.plan})` };
  },
  'accounts list': async ({ db }) => {
    const accounts = await listAccounts(db);
    return {
      json: { data: accounts.map(accountJson) },
      text: accounts.map((a) => `${a.id}  ${a.name}  ${a.plan}${a.restricted ? '  restricted' : ''}`).join('\n') || '(no accounts)',
    };
  },
  'accounts set-plan': async ({ db, args }) => {
    const account = await requireAccount(db, positional(args, 2, 'account'));
    const plan = parseWith(planSchema, positional(args, 3, 'plan (starter, pro or enterprise)'), 'plan');
    const liveKeysFlag = stringFlag(args, 'live-keys');
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
  'accounts restrict': async ({ db, config, args }) => {
    const account = await requireAccount(db, positional(args, 2, 'account'));
    await setRestricted(db, account.id, true);
    const warning = await announce(config, { type: 'account', accountId: account.id, restricted: true });
    return { json: accountJson({ ...account, restricted: true }), text: `account ${account.name} is restricted`, warning };
  },
  'accounts unrestrict': async ({ db, config, args }) => {
    const account = await requireAccount(db, positional(args, 2, 'account'));
    await setRestricted(db, account.id, false);
    const warning = await announce(config, { type: 'account', accountId: account.id, restricted: false });
    return { json: accountJson({ ...account, restricted: false }), text: `account ${account.name} is no longer restricted`, warning };
  },
  'keys create': async ({ db, config, args }) => {
    const scopesFlag = stringFlag(args, 'scopes');
    const rps = stringFlag(args, 'rps');
    const issued = await new KeyService(db, config.COS_SECRET).create({
      account: stringFlag(args, 'account', true),
      environment: parseWith(environmentSchema, stringFlag(args, 'env', true), 'env'),
      name: stringFlag(args, 'name'),
      scopes:
        scopesFlag === undefined
          ? undefined
          : parseWith(
              z.array(scopeSchema).min(1),
              scopesFlag
                .split(',')
                .map((s) => s.trim())
                .filter(Boolean),
              'scopes',
            ),
      rateLimitRps: rps === undefined ? null : parseWith(z.coerce.number().int().positive(), rps, 'rps'),
    });
    await auditKeyAction(db, issued.id, 'key.create');
    return { json: issuedJson(issued), text: issuedText(issued) };
  },
  'keys list': async ({ db, args }) => {
    const account = await requireAccount(db, stringFlag(args, 'account', true));
    const keys = await listKeys(db, account.id);
    return {
      json: { data: keys.map(keyJson) },
      text:
        keys.map((k) => `${k.id}  ${k.environment}  …${k.last4}  ${keyStatus(k)}  ${k.name}  [${k.scopes.join(',')}]`).join('\n') ||
        '(no keys)',
    };
  },
  'keys revoke': async ({ db, config, args }) => {
    const key = await new KeyService(db, config.COS_SECRET).revoke(positional(args, 2, 'key id'));
    await auditKeyAction(db, key.id, 'key.revoke');
    const warning = await announce(config, { type: 'key', keyId: key.id, revokedAt: key.revokedAt ?? undefined });
    return { json: keyJson(key), text: `revoked ${key.id}`, warning };
  },
  'keys delete': async ({ db, config, args }) => {
    const key = await new KeyService(db, config.COS_SECRET).delete(positional(args, 2, 'key id'));
    await auditKeyAction(db, key.id, 'key.delete');
    const warning = await announce(config, { type: 'key', keyId: key.id, deletedAt: key.deletedAt ?? undefined });
    return { json: keyJson(key), text: `deleted ${key.id}`, warning };
  },
  'keys rotate': async ({ db, config, args }) => {
    const graceFlag = stringFlag(args, 'grace');
    const grace = graceFlag === undefined ? undefined : parseDuration(graceFlag);
    if (grace === null) throw new UsageError(`invalid --grace: "${graceFlag}" is not a duration like 30m, 24h or 7d`);
    const keyId = positional(args, 2, 'key id');
    const { previousKeyExpiresAt, ...issued } = await new KeyService(db, config.COS_SECRET).rotate(keyId, grace);
    await auditKeyAction(db, keyId, 'key.rotate');
    return { json: issuedJson(issued), text: `${issuedText(issued)}\nthe previous key works until ${previousKeyExpiresAt}` };
  },
  'test-data reset': async ({ db, config, args }) => {
    const accountRef = stringFlag(args, 'account');
    const account = accountRef === undefined ? undefined : await requireAccount(db, accountRef);
    const result = await withRedis(config, (redis) =>
      resetTestData(db, redis, keysFor(config), { trigger: 'manual', accountId: account?.id }),
    );
    const scope = account ? `account ${account.name}` : 'all accounts';
    return {
      json: { account: account?.name ?? null, rowsRemoved: result.rowsRemoved },
      text: `test data reset for ${scope}: ${Object.entries(result.rowsRemoved)
        .map(([t, n]) => `${t} ${n}`)
        .join(', ')}`,
    };
  },
  usage: async ({ db, config, args }) => {
    const account = await requireAccount(db, stringFlag(args, 'account', true));
    const month = parseWith(
      z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'use YYYY-MM'),
      stringFlag(args, 'month') ?? utcMonth(Date.now()),
      'month',
    );
    const format = parseWith(z.enum(['json', 'csv']), stringFlag(args, 'format') ?? (args.flags.get('json') ? 'json' : 'csv'), 'format');
    // Flush first so the report includes what is still metered in Redis (flushes are idempotent).
    await withRedis(config, (redis) => flushUsage(redis, keysFor(config), db));
    const rows = await usageForMonth(db, account.id, month);
    const totals = await monthlyTotals(db, account.id, month);
    const csv = [
      'day,key_id,endpoint,status_class,count',
      ...rows.map((r) => `${r.day},${r.keyId},${r.endpoint},${r.statusClass},${r.count}`),
    ].join('\n');
    const json = { account: account.name, accountId: account.id, month, totals, data: rows };
    return { json, text: csv, raw: format === 'csv' ? csv : JSON.stringify(json) };
  },
  evaluate: async ({ db, args }) => {
    const account = await requireAccount(db, stringFlag(args, 'account', true));
    const environment = parseWith(environmentSchema, stringFlag(args, 'env', true), 'env');
    const sinceFlag = stringFlag(args, 'since');
    const since = sinceFlag === undefined ? undefined : parseSince(sinceFlag);
    const result = await evaluateTenant(db, { accountId: account.id, environment }, since);
    const report = { account, environment, since, ...result };
    return { json: evaluationJson(report), text: evaluationText(report) };
  },
  'jobs failed': async ({ config, args }) =>
    withQueues(config, args, async (queues) => {
      const limit = parseWith(z.coerce.number().int().min(1).max(1000), stringFlag(args, 'limit') ?? '50', 'limit');
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
    }),
  'jobs retry-failed': async ({ config, args }) =>
    withQueues(config, args, async (queues) => {
      const failed = (await Promise.all(queues.map((queue) => queue.getFailed(0, -1)))).flat();
      await Promise.all(failed.map((job) => job.retry('failed')));
      return { json: { retried: failed.length }, text: `retried ${failed.length} failed jobs` };
    }),
};

/** Key actions of the CLI join the account's audit log (shown on the dashboard) as the operator's. */
async function auditKeyAction(db: Db, keyId: string, action: AuditAction): Promise<void> {
  const key = await findKeyById(db, keyId);
  if (!key) return;
  await recordAudit(db, { accountId: key.accountId, actor: 'operator (cli)', action, keyId, environment: key.environment, country: null });
}

/**
 * Announces a change already made in Postgres to every API instance over Redis
 * (docs/adr/0004-credential-cache.md); returns a warning when Redis cannot be reached — the
 * change is made, and instances see it within about 2 s of reaching Postgres.
 */
async function announce(config: CliConfig, change: CredentialChange): Promise<string | undefined> {
  const redis = createRedis(redisTarget(config), 'once');
  try {
    await redis.connect();
    await publishCredentialChange(redis, keysFor(config), change);
    return undefined;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return `could not announce the change on Redis (${reason}); API instances apply it within about 2 s of reaching Postgres`;
  } finally {
    redis.disconnect();
  }
}

async function withRedis<T>(config: CliConfig, run: (redis: ReturnType<typeof createRedis>) => Promise<T>): Promise<T> {
  const redis = createRedis(redisTarget(config), 'consumer');
  try {
    return await run(redis);
  } finally {
    redis.disconnect();
  }
}

/** The named queue: every partition of the events queue (and the legacy one), or the maintenance queue. */
async function withQueues(config: CliConfig, args: ParsedArgs, run: (queues: Queue[]) => Promise<CommandOutput>): Promise<CommandOutput> {
  const name = parseWith(z.enum([EVENTS_QUEUE, MAINTENANCE_QUEUE]), stringFlag(args, 'queue') ?? EVENTS_QUEUE, 'queue');
  const redis = createRedis(redisTarget(config), 'consumer');
  const keys = keysFor(config);
  const prefixes = name === EVENTS_QUEUE ? keys.eventQueuePrefixes : [keys.maintenanceQueuePrefix];
  const queues = prefixes.map((prefix) => new Queue(name, { connection: redis, prefix }));
  try {
    return await run(queues);
  } finally {
    await Promise.all(queues.map((queue) => queue.close()));
    redis.disconnect();
  }
}
