import { OpenLoopSchedule } from '../../scripts/bench/open-loop';

describe('open-loop schedule', () => {
  const schedule = new OpenLoopSchedule(100, 1000, 50); // 1,000 requests/s from t = 100 ms: one per ms

  it('makes request i due i / rate after the start, request 0 at the start itself', () => {
    expect(schedule.dueAt(0)).toBe(100);
    expect(schedule.dueAt(5)).toBe(105);
    expect(schedule.dueBy(99.9)).toBe(0);
    expect(schedule.dueBy(100)).toBe(1);
    expect(schedule.dueBy(104.99)).toBe(5);
    expect(schedule.dueBy(105)).toBe(6);
    expect(schedule.endMs).toBe(149);
  });

  it('after a stall makes every request that fell due in it due at once, never more than the total', () => {
    // The client was blocked from 110 to 140 ms: 30 requests became due meanwhile, none was
    // held back to wait for an answer.
    expect(schedule.dueBy(140) - schedule.dueBy(110)).toBe(30);
    expect(schedule.dueBy(10_000)).toBe(50);
  });

  it('measures latency from the scheduled time, so a late send counts as waiting', () => {
    // Request 20 was due at 120 ms; the stalled client sent it at 140 and the answer came at 141.
    // From its send it took 1 ms; from its schedule, 21 ms — the figure the client reports.
    expect(schedule.latency(20, 141)).toBe(21);
  });

  it('spaces requests evenly at a rate that is not a whole number of ms per request', () => {
    const third = new OpenLoopSchedule(0, 300, 900);
    expect(third.dueAt(3)).toBeCloseTo(10, 9);
    expect(third.dueBy(10)).toBe(4);
    expect(third.dueBy(1000)).toBe(301);
  });

  it('refuses a rate that is not positive', () => {
    expect(() => new OpenLoopSchedule(0, 0, 10)).toThrow('rate > 0');
  });
});
