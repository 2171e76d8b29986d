import { cpuPercent, type CpuSnapshot } from '../../scripts/bench/cpu';

/** A snapshot of the given processes' ticks (1/100 s), with the machine's totals. */
const snapshot = (pids: Array<[number, string, number, boolean?]>, busy: number): CpuSnapshot => ({
  pids: new Map(pids.map(([pid, role, ticks, forked = false]) => [pid, { role, ticks, forked }])),
  self: 0,
  busy,
  irq: 0,
  steal: 0,
});

describe('bench CPU accounting', () => {
  it("books a Redis fork's time to Redis, while it runs and after it exited into its parent's", () => {
    // Redis (pid 1) forks a rewrite (pid 2) that has used 30 ticks; by the second snapshot the
    // fork used 20 more and exited: its 50 are now in Redis's reaped children's time.
    const before = snapshot(
      [
        [1, 'redis', 100],
        [2, 'redis', 30, true],
      ],
      130,
    );
    const after = snapshot([[1, 'redis', 100 + 40 + 50]], 130 + 40 + 20);
    expect(cpuPercent(before, after, 1, 'load generator')).toMatchObject({ redis: 60, other: 0 });
  });

  it('counts a fork that runs across both snapshots once, and other work as other', () => {
    const before = snapshot(
      [
        [1, 'postgres', 10],
        [3, 'postgres', 5, true],
      ],
      15,
    );
    const after = snapshot(
      [
        [1, 'postgres', 12],
        [3, 'postgres', 9, true],
      ],
      15 + 6 + 10,
    );
    expect(cpuPercent(before, after, 2, 'load generator')).toMatchObject({ postgres: 3, other: 5 });
  });
});
