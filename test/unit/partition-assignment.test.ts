import fc from 'fast-check';
import { assignPartitions } from '../../shared/jobs/partition-assignment';
import { shareOut } from '../../worker/partition-consumers';

/**
 * The share of event-queue partitions each live worker consumes: every worker computes it alone
 * from the member list, so it must be a function of that list only, cover every partition once,
 * balance the shares and move few partitions when a worker comes or goes.
 */
const workerId = fc.stringMatching(/^[a-z0-9.-]{1,12}:\d{1,6}:[0-9a-f]{8}$/);
const members = fc.uniqueArray(workerId, { minLength: 1, maxLength: 12 });
const partitions = fc.integer({ min: 1, max: 64 });

/** Owner of each partition, by partition number. */
function owners(assignment: Map<string, number[]>, count: number): string[] {
  const owner = new Array<string>(count);
  for (const [worker, owned] of assignment) for (const partition of owned) owner[partition] = worker;
  return owner;
}
const moved = (before: string[], after: string[]) => before.filter((owner, partition) => owner !== after[partition]).length;
const ids = (n: number, seed: string) => Array.from({ length: n }, (_, i) => `host-${seed}-${i}:${1000 + i}:${seed}${i}`);

it('gives every partition exactly one owner among the members', () => {
  fc.assert(
    fc.property(members, partitions, (list, count) => {
      const assignment = assignPartitions(list, count);
      expect([...assignment.keys()].sort()).toEqual([...list].sort());
      const all = [...assignment.values()].flat();
      expect(all.sort((a, b) => a - b)).toEqual(Array.from({ length: count }, (_, i) => i));
    }),
  );
});

it('balances the shares: each worker gets ⌊P/N⌋ or ⌈P/N⌉ partitions', () => {
  fc.assert(
    fc.property(members, partitions, (list, count) => {
      const sizes = [...assignPartitions(list, count).values()].map((owned) => owned.length);
      expect(Math.max(...sizes)).toBe(Math.ceil(count / list.length));
      expect(Math.min(...sizes)).toBe(Math.floor(count / list.length));
    }),
  );
});

it('is a function of the member set alone: every worker computes the same assignment, whatever order it lists them in', () => {
  fc.assert(
    fc.property(members, partitions, fc.integer(), (list, count, seed) => {
      const shuffled = [...list].sort(
        (a, b) => ((a.charCodeAt(seed % a.length) ^ seed) & 7) - ((b.charCodeAt(seed % b.length) ^ seed) & 7),
      );
      expect(assignPartitions([...shuffled, list[0]!], count)).toEqual(assignPartitions(list, count));
    }),
  );
  expect(assignPartitions([], 8)).toEqual(new Map());
});

it('gives two workers of eight partitions four each, and one worker all of them', () => {
  const [a, b] = ids(2, 'x');
  expect(assignPartitions([a!], 8).get(a!)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  const two = assignPartitions([a!, b!], 8);
  expect(two.get(a!)).toHaveLength(4);
  expect(two.get(b!)).toHaveLength(4);
});

it('moves few partitions when a worker joins or leaves: close to the minimum, far below a round-robin', () => {
  const count = 8;
  const roundRobin = (list: string[]) =>
    [...list].sort().reduce((map, worker, i, sorted) => {
      map.set(
        worker,
        Array.from({ length: count }, (_, p) => p).filter((p) => p % sorted.length === i),
      );
      return map;
    }, new Map<string, number[]>());
  let joinMoves = 0;
  let joinMinimum = 0;
  let leaveMoves = 0;
  let leaveMinimum = 0;
  /** From two workers up (one to two moves half the partitions whatever the rule). */
  let joinMovesFromTwo = 0;
  let roundRobinMovesFromTwo = 0;
  let groups = 0;
  for (let size = 1; size <= 4; size++) {
    for (let seed = 0; seed < 50; seed++, groups++) {
      const group = ids(size, `g${size}s${seed}`);
      const before = owners(assignPartitions(group, count), count);
      const joiner = `joiner-${seed}:1:${size}`;
      const joined = owners(assignPartitions([...group, joiner], count), count);
      joinMoves += moved(before, joined);
      joinMinimum += joined.filter((owner) => owner === joiner).length; // what the newcomer must take
      if (size > 1) {
        joinMovesFromTwo += moved(before, joined);
        roundRobinMovesFromTwo += moved(owners(roundRobin(group), count), owners(roundRobin([...group, joiner]), count));
        const leaver = group[seed % size]!;
        const left = owners(
          assignPartitions(
            group.filter((worker) => worker !== leaver),
            count,
          ),
          count,
        );
        leaveMoves += moved(before, left);
        leaveMinimum += before.filter((owner) => owner === leaver).length; // what the others must take over
      }
    }
  }
  expect(groups).toBe(200);
  expect(joinMoves).toBeLessThanOrEqual(1.5 * joinMinimum);
  expect(leaveMoves).toBeLessThanOrEqual(1.5 * leaveMinimum);
  expect(joinMovesFromTwo).toBeLessThan(0.6 * roundRobinMovesFromTwo);
});

it("shares a worker's jobs out over the queues it consumes, at least one each", () => {
  expect(shareOut(1024, 8)).toEqual(Array.from({ length: 8 }, () => 128));
  expect(shareOut(1024, 9).reduce((sum, n) => sum + n, 0)).toBe(1024);
  expect(Math.max(...shareOut(1024, 9)) - Math.min(...shareOut(1024, 9))).toBeLessThanOrEqual(1);
  expect(shareOut(2, 5)).toEqual([1, 1, 1, 1, 1]);
  expect(shareOut(64, 0)).toEqual([]);
});
