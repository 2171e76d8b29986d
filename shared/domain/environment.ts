import { z } from 'zod';

export const ENVIRONMENTS = ['test', 'live'] as const;
export const environmentSchema = z.enum(ENVIRONMENTS);
export type Environment = z.infer<typeof environmentSchema>;

/** Every piece of tenant data is partitioned by this pair. */
export interface Tenant {
  accountId: string;
  environment: Environment;
}
