import { createHmac } from 'node:crypto';
import type { Tenant } from '../domain/environment';

/**
 * A keyed, truncated hash of a tenant's userId. Request ids carry it (so an outcome can be tied
 * to its user even when its decision is gone) and erasure records keep only it, never the id.
 */
export function userHash(secret: string, tenant: Tenant, userId: string): string {
  return createHmac('sha256', secret)
    .update(`user:${tenant.accountId}\u0000${tenant.environment}\u0000${userId}`)
    .digest()
    .subarray(0, 8)
    .toString('hex');
}
