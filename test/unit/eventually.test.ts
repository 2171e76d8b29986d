import { eventually, eventuallyEqual } from '../support/harness';

describe('eventually: polls for "not yet", never past a failure', () => {
  it('returns the first truthy value, polling while the check says not yet', async () => {
    let calls = 0;
    expect(await eventually(async () => (++calls >= 3 ? 'ready' : null), 5000, 1)).toBe('ready');
    expect(calls).toBe(3);
  });

  it('lets an assertion error through at once instead of retrying until the time-out', async () => {
    let calls = 0;
    const failing = eventually(async () => {
      calls++;
      expect(calls).toBe(0);
      return true;
    }, 60_000);
    await expect(failing).rejects.toThrow('expect(received).toBe(expected)');
    expect(calls).toBe(1);
  });

  it('lets any other error through at once, but retries a connection refused or reset (a process still starting)', async () => {
    let calls = 0;
    await expect(
      eventually(async () => {
        calls++;
        throw new TypeError('a bug');
      }, 60_000),
    ).rejects.toThrow('a bug');
    expect(calls).toBe(1);
    let attempts = 0;
    const refused = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) });
    expect(
      await eventually(
        async () => {
          if (++attempts < 3) throw refused;
          return 'up';
        },
        5000,
        1,
      ),
    ).toBe('up');
    await expect(eventually(async () => null, 30, 5)).rejects.toThrow('condition not met within 30 ms');
  });

  it('eventuallyEqual waits for the value to equal, and at the time-out fails with the diff', async () => {
    let n = 0;
    expect(await eventuallyEqual(async () => ({ count: ++n }), { count: 3 }, 5000, 1)).toEqual({ count: 3 });
    await expect(eventuallyEqual(async () => ({ count: 1 }), { count: 2 }, 20, 5)).rejects.toThrow(/"count": 2/);
  });
});
