import { createHmac } from 'node:crypto';
import { BoundedMap } from '../cache/bounded-map';
import type { Tenant } from '../domain/environment';
import { tenantKey } from '../domain/environment';

/**
 * A keyed, truncated hash of a tenant's userId. Request ids carry it (so an outcome can be tied
 * to its user even when its decision is gone) and erasure records keep only it, never the id.
 * Its input is spelled here, not by tenantKey: stored hashes depend on it.
 */
export function userHash(secret: string, tenant: Tenant, userId: string): string {
  return createHmac('sha256', secret)
    .update(`user:${tenant.accountId}\u0000${tenant.environment}\u0000${userId}`)
    .digest()
    .subarray(0, 8)
    .toString('hex');
}

/** userHash for a process that hashes the same users again and again: recent ones are remembered. */
export class UserHashes {
  private readonly known: BoundedMap<string, string>;

  constructor(
    private readonly secret: string,
    capacity = 4096,
  ) {
    this.known = new BoundedMap(capacity);
  }

  of(tenant: Tenant, userId: string): string {
    return this.known.getOrSet(tenantKey(tenant, userId), () => userHash(this.secret, tenant, userId));
  }
}
