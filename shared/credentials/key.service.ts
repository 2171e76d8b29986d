import type { Db, DbOrTx } from '../db/database';
import type { Environment } from '../domain/environment';
import { AppError } from '../errors/app-error';
import { liveKeyCap, maxKeyRps, type LimitSetter } from '../limits/plans';
import { findOrCreateAccount, lockAccount, type Account } from '../accounts/account.repository';
import { generateApiKey, hashApiKey, lastFour, SCOPES, type Scope } from './api-key';
import { countLiveKeys, findKeyById, insertKey, newKeyId, updateKey, type ApiKeyRecord } from './key.repository';
import { recordEvent } from '../webhooks/outbox.repository';

/** A key as webhook payloads name it: never its secret. */
const keySummary = (key: { id: string; name: string; last4: string }) => ({ id: key.id, name: key.name, last4: key.last4 });

export const DEFAULT_ROTATION_GRACE_MS = 24 * 3_600_000;

export interface IssuedKey {
  id: string;
  key: string;
  name: string;
  last4: string;
  account: string;
  accountId: string;
  environment: Environment;
  scopes: Scope[];
  createdAt: string;
}

export class KeyNotFoundError extends Error {}

/**
 * A key the account's plan does not allow: a per-second limit above what the setter may give,
 * a rate limit on a test key (test keys have none), or a live key past the account's cap.
 */
export class PlanLimitError extends AppError {
  constructor(message: string, field?: string) {
    super('VALIDATION_ERROR', message, field ? { fields: [{ field, message }] } : undefined);
  }
}

/**
 * Key lifecycle: create, revoke, delete, rotate with a grace period. `setter` is whom it serves:
 * the operator's CLI may give a key any per-second limit, a customer's dashboard at most the plan's.
 */
export class KeyService {
  constructor(
    private readonly db: Db,
    private readonly secret: string,
    private readonly setter: LimitSetter = 'operator',
  ) {}

  async create(input: {
    account: string;
    environment: Environment;
    name?: string;
    scopes?: Scope[];
    rateLimitRps?: number | null;
  }): Promise<IssuedKey> {
    return this.db.transaction().execute(async (tx) => {
      const account = await findOrCreateAccount(tx, input.account);
      const rateLimitRps = input.rateLimitRps ?? null;
      if (rateLimitRps !== null) checkRateLimit(account, input.environment, rateLimitRps, this.setter);
      if (input.environment === 'live') {
        // Serialises the account's key creations: two at once cannot both take the last place.
        await lockAccount(tx, account.id);
        const cap = liveKeyCap(account.plan, account.liveKeyLimit);
        if ((await countLiveKeys(tx, account.id, new Date())) >= cap) {
          throw new PlanLimitError(
            `The ${account.plan} plan allows ${cap} live keys at once; revoke or delete one first, or move to a larger plan`,
          );
        }
      }
      const issued = await this.issue(tx, account, input.environment, input.name, input.scopes, rateLimitRps);
      await recordEvent(tx, {
        accountId: account.id,
        environment: input.environment,
        type: 'key.created',
        data: { key: keySummary(issued), scopes: issued.scopes, createdAt: issued.createdAt },
        occurredAt: new Date(issued.createdAt),
      });
      return issued;
    });
  }

  private async issue(
    db: DbOrTx,
    account: Account,
    environment: Environment,
    name: string | undefined,
    scopes: Scope[] | undefined,
    rateLimitRps: number | null,
  ): Promise<IssuedKey> {
    const key = generateApiKey(environment);
    const record = await insertKey(db, {
      id: newKeyId(),
      accountId: account.id,
      environment,
      name: name ?? `${environment} key`,
      keyHash: hashApiKey(key, this.secret),
      last4: lastFour(key),
      scopes: scopes && scopes.length > 0 ? [...new Set(scopes)] : [...SCOPES],
      rateLimitRps,
    });
    return {
      id: record.id,
      key,
      name: record.name,
      last4: record.last4,
      account: account.name,
      accountId: account.id,
      environment,
      scopes: record.scopes,
      createdAt: record.createdAt,
    };
  }

  /** Idempotent: revoking again keeps the first revocation time (and announces nothing new). */
  async revoke(id: string): Promise<ApiKeyRecord> {
    return this.db.transaction().execute(async (tx) => {
      const key = await this.require(tx, id);
      if (key.revokedAt) return key;
      const revokedAt = new Date();
      await updateKey(tx, id, { revoked_at: revokedAt });
      await recordEvent(tx, {
        accountId: key.accountId,
        environment: key.environment,
        type: 'key.revoked',
        data: { key: keySummary(key), revokedAt: revokedAt.toISOString() },
        occurredAt: revokedAt,
      });
      return (await findKeyById(tx, id))!;
    });
  }

  async delete(id: string): Promise<ApiKeyRecord> {
    return this.db.transaction().execute(async (tx) => {
      const key = await this.require(tx, id);
      const deletedAt = new Date();
      await updateKey(tx, id, { deleted_at: deletedAt });
      await recordEvent(tx, {
        accountId: key.accountId,
        environment: key.environment,
        type: 'key.deleted',
        data: { key: keySummary(key), deletedAt: deletedAt.toISOString() },
        occurredAt: deletedAt,
      });
      return (await findKeyById(tx, id))!;
    });
  }

  /**
   * Issues a replacement; the old key keeps working until the grace period ends. With
   * `refuseRotating`, a key already rotating out is refused rather than rotated again (which
   * would cut its grace short and leave two replacements); the account's lock makes two
   * rotations of one key at once see each other.
   */
  async rotate(
    id: string,
    graceMs = DEFAULT_ROTATION_GRACE_MS,
    options: { refuseRotating?: boolean } = {},
  ): Promise<IssuedKey & { previousKeyExpiresAt: string }> {
    return this.db.transaction().execute(async (tx) => {
      const found = await findKeyById(tx, id);
      if (found && options.refuseRotating) await lockAccount(tx, found.accountId);
      const old = found && options.refuseRotating ? await findKeyById(tx, id) : found;
      const expired = old?.expiresAt && Date.parse(old.expiresAt) <= Date.now();
      if (!old || old.deletedAt || old.revokedAt || expired) throw new KeyNotFoundError(`no active key with id ${id}`);
      if (options.refuseRotating && old.expiresAt) {
        const until = `${old.expiresAt.slice(0, 10)} ${old.expiresAt.slice(11, 16)} UTC`;
        throw new AppError(
          'VALIDATION_ERROR',
          `Key “${old.name}” (…${old.last4}) is already rotating out until ${until}; rotate its replacement instead`,
        );
      }
      const account = await findOrCreateAccount(tx, old.accountId);
      const issued = await this.issue(tx, account, old.environment, old.name, old.scopes, old.rateLimitRps);
      const expiresAt = new Date(Date.now() + graceMs);
      const current = old.expiresAt ? new Date(old.expiresAt) : null;
      const previousKeyExpiresAt = current && current < expiresAt ? current : expiresAt;
      await updateKey(tx, id, { expires_at: previousKeyExpiresAt, replaced_by: issued.id });
      await recordEvent(tx, {
        accountId: old.accountId,
        environment: old.environment,
        type: 'key.rotated',
        data: { key: keySummary(old), replacement: keySummary(issued), previousKeyExpiresAt: previousKeyExpiresAt.toISOString() },
        occurredAt: new Date(issued.createdAt),
      });
      return { ...issued, previousKeyExpiresAt: previousKeyExpiresAt.toISOString() };
    });
  }

  /** The key, locked for the transaction: a second revoke or delete of it waits, then sees the first. */
  private async require(tx: DbOrTx, id: string): Promise<ApiKeyRecord> {
    const key = await findKeyById(tx, id, { forUpdate: true });
    if (!key || key.deletedAt) throw new KeyNotFoundError(`no key with id ${id}`);
    return key;
  }
}

function checkRateLimit(account: Account, environment: Environment, rateLimitRps: number, setter: LimitSetter): void {
  if (environment === 'test') throw new PlanLimitError('Test keys have no rate limit: leave it out', 'rateLimitRps');
  const max = maxKeyRps(account.plan, setter);
  if (max !== null && rateLimitRps > max) {
    throw new PlanLimitError(`The ${account.plan} plan allows at most ${max} requests per second per key`, 'rateLimitRps');
  }
}
