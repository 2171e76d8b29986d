import type { DecisionJob, OutcomeJob } from '../../shared/jobs/catalog';

/** One job waiting in a batch, with the callbacks that settle its BullMQ processor. */
export type BatchItem =
  | { kind: 'decision'; data: DecisionJob; resolve: (result: string) => void; reject: (error: unknown) => void }
  | { kind: 'outcome'; data: OutcomeJob; resolve: (result: string) => void; reject: (error: unknown) => void };

/** What happened to each item of a batch: applied / skipped (done), or retry later. */
export interface BatchResult {
  done: Map<BatchItem, string>;
  retry: Map<BatchItem, Error>;
}
