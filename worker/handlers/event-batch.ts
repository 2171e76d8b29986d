import type { DecisionJob, OutcomeJob } from '../../shared/jobs/catalog';

/** One job waiting in a batch, with the callbacks that settle its BullMQ processor. */
export type BatchItem =
  | { kind: 'decision'; data: DecisionJob; resolve: (result: string) => void; reject: (error: unknown) => void }
  | { kind: 'outcome'; data: OutcomeJob; resolve: (result: string) => void; reject: (error: unknown) => void };
