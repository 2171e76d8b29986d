import { createHash } from 'node:crypto';
import { compareStrings } from '../util/compare';

/**
 * Which live worker consumes which event-queue partition
 * (docs/adr/0015-worker-partition-ownership.md). Every worker computes it on its own from the
 * same member list, so the function must give every worker the same answer with no other input:
 *
 * - every partition has exactly one owner, and owners' shares differ by at most one partition
 *   (⌊P/N⌋ or ⌈P/N⌉ of P partitions over N workers);
 * - within that balance each partition prefers the worker its rendezvous score ranks first, so a
 *   worker joining or leaving moves few partitions besides the ones it takes or gives up —
 *   where a round-robin over the sorted members would move most of them.
 *
 * The (worker, partition) pairs are taken best score first; a pair is kept while its partition
 * is free and its worker below its share.
 */
export function assignPartitions(members: readonly string[], partitions: number): Map<string, number[]> {
  const workers = [...new Set(members)].sort(compareStrings);
  const owned = new Map<string, number[]>(workers.map((worker) => [worker, []]));
  if (workers.length === 0) return owned;
  const pairs: Array<{ score: bigint; worker: string; partition: number }> = [];
  for (const worker of workers) {
    for (let partition = 0; partition < partitions; partition++)
      pairs.push({ score: rendezvousScore(worker, partition), worker, partition });
  }
  pairs.sort((a, b) =>
    a.score === b.score ? compareStrings(a.worker, b.worker) || a.partition - b.partition : a.score > b.score ? -1 : 1,
  );
  const share = Math.floor(partitions / workers.length);
  // Shares of ⌈P/N⌉ left to hand out: the first workers to reach ⌊P/N⌋ with a pair still to take get them.
  let larger = partitions % workers.length;
  const taken = new Set<number>();
  for (const { worker, partition } of pairs) {
    if (taken.has(partition)) continue;
    const mine = owned.get(worker)!;
    if (mine.length > share || (mine.length === share && larger === 0)) continue;
    if (mine.length === share) larger--;
    mine.push(partition);
    taken.add(partition);
  }
  for (const mine of owned.values()) mine.sort((a, b) => a - b);
  return owned;
}

/** A stable pseudo-random rank of a worker for a partition (the first 8 bytes of a SHA-256). */
function rendezvousScore(worker: string, partition: number): bigint {
  return createHash('sha256').update(`${worker}\u0000${partition}`).digest().readBigUInt64BE(0);
}
