import { recordAudit } from '../audit/audit.repository';
import type { Db } from '../db/database';
import type { AuditAction } from '../domain/audit-actions';
import type { CredentialChange } from './credential-changes.repository';
import { findKeyById, type ApiKeyRecord } from './key.repository';
import type { IssuedKey, KeyService } from './key.service';

/** Who changes a key: a dashboard user (their email and the client's country) or the operator's CLI. */
export interface KeyActor {
  name: string;
  country: string | null;
}

/** Tells every API instance of a change already made in Postgres; throws when it could not. */
export type AnnounceChange = (change: CredentialChange) => Promise<void>;

/**
 * Announces a change made in Postgres; when Redis cannot be reached, returns the warning to
 * show instead of failing: the change is made, and instances see it from Postgres.
 */
export async function announceOrWarn(announce: AnnounceChange, change: CredentialChange): Promise<string | undefined> {
  try {
    await announce(change);
    return undefined;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return `could not announce the change on Redis (${reason}); API instances apply it within about 2 s of reaching Postgres`;
  }
}

/** What a change came to, and a warning when API instances were not told at once. */
export interface Changed<T> {
  result: T;
  /** Set when the announcement failed: instances apply the change within about 2 s of reaching Postgres. */
  warning?: string;
}

/**
 * The key lifecycle — create, rotate, revoke, delete — with its side effects in one order for
 * every caller (the CLI and the dashboard): the change in Postgres, then its announcement to
 * the API instances (a revocation must reach them first, docs/adr/0004-credential-cache.md),
 * then the account's audit entry.
 */
export class KeyLifecycle {
  constructor(private readonly deps: { db: Db; keys: KeyService; announce: AnnounceChange }) {}

  async create(input: Parameters<KeyService['create']>[0], actor: KeyActor): Promise<Changed<IssuedKey>> {
    const issued = await this.deps.keys.create(input);
    await this.audit(issued.id, 'key.create', actor);
    return { result: issued };
  }

  async rotate(
    id: string,
    graceMs: number,
    actor: KeyActor,
    options?: Parameters<KeyService['rotate']>[2],
  ): Promise<Changed<Awaited<ReturnType<KeyService['rotate']>>>> {
    const rotated = await this.deps.keys.rotate(id, graceMs, options);
    // The entry names both keys: the one rotating out and the one replacing it.
    await this.audit(id, 'key.rotate', actor, rotated.id);
    return { result: rotated };
  }

  async revoke(id: string, actor: KeyActor): Promise<Changed<ApiKeyRecord>> {
    const key = await this.deps.keys.revoke(id);
    const warning = await this.announce({ type: 'key', keyId: key.id, revokedAt: key.revokedAt ?? undefined });
    await this.audit(key.id, 'key.revoke', actor);
    return warning ? { result: key, warning } : { result: key };
  }

  async delete(id: string, actor: KeyActor): Promise<Changed<ApiKeyRecord>> {
    const key = await this.deps.keys.delete(id);
    const warning = await this.announce({ type: 'key', keyId: key.id, deletedAt: key.deletedAt ?? undefined });
    await this.audit(key.id, 'key.delete', actor);
    return warning ? { result: key, warning } : { result: key };
  }

  private announce(change: CredentialChange): Promise<string | undefined> {
    return announceOrWarn(this.deps.announce, change);
  }

  private async audit(keyId: string, action: AuditAction, actor: KeyActor, newKeyId?: string): Promise<void> {
    const key = await findKeyById(this.deps.db, keyId);
    if (!key) return;
    await recordAudit(this.deps.db, {
      accountId: key.accountId,
      actor: actor.name,
      action,
      keyId,
      newKeyId,
      environment: key.environment,
      country: actor.country,
    });
  }
}
