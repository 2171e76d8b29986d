import { z } from 'zod';

export const ENVIRONMENTS = ['test', 'live'] as const;
export const environmentSchema = z.enum(ENVIRONMENTS);
export type Environment = z.infer<typeof environmentSchema>;

/** Every piece of tenant data is partitioned by this pair. */
export interface Tenant {
  accountId: string;
  environment: Environment;
}

/**
 * A tenant's partition, with more parts after it: `<accountId>:<environment>[:<part>…]`. The one
 * spelling for Redis keys and for in-memory maps keyed by tenant (or tenant and user).
 */
export function tenantKey(tenant: Tenant, ...parts: string[]): string {
  return [tenant.accountId, tenant.environment, ...parts].join(':');
}
