import { findKeyById, listKeys, type ApiKeyRecord } from '../../shared/credentials/key.repository';
import type { Db } from '../../shared/db/database';
import type { Environment } from '../../shared/domain/environment';
import { AppError } from '../../shared/errors/app-error';

/** A key as the account that holds it names it: one object, so the two ids cannot swap. */
export interface AccountKeyRef {
  accountId: string;
  keyId: string;
}

/**
 * What the dashboard reads of an account's API keys. Changes go through KeyLifecycle
 * (shared/credentials/key-lifecycle.ts).
 */
export class AccountKeys {
  constructor(private readonly db: Db) {}

  /** The account's keys that are not deleted, oldest first. */
  list(accountId: string): Promise<ApiKeyRecord[]> {
    return listKeys(this.db, accountId);
  }

  /** The account's keys of one environment (not deleted), oldest first. */
  async inEnvironment(accountId: string, environment: Environment): Promise<ApiKeyRecord[]> {
    return (await this.list(accountId)).filter((k) => k.environment === environment);
  }

  /** The key `keyId` when the account holds it, whatever its state (deleted included). */
  async find({ accountId, keyId }: AccountKeyRef): Promise<ApiKeyRecord | null> {
    const key = await findKeyById(this.db, keyId);
    return key && key.accountId === accountId ? key : null;
  }

  /** The key `keyId` of this account and environment, not deleted; any other is "not found", whoever owns it. */
  async own(ref: AccountKeyRef & { environment: Environment }): Promise<ApiKeyRecord> {
    const key = await this.find(ref);
    if (!key || key.deletedAt || key.environment !== ref.environment) {
      throw new AppError('NOT_FOUND', 'No such key in this account and environment');
    }
    return key;
  }
}
