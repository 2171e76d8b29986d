import { createLogger } from '../../shared/logger/logger';
import { LostLocks } from '../../worker/lost-locks';
import { capture } from '../support/cli';

describe('LostLocks', () => {
  afterEach(() => jest.useRealTimers());

  it('reports a burst of lost locks as one line with their count, and passes other errors on', () => {
    jest.useFakeTimers();
    const out = capture();
    const locks = new LostLocks(createLogger('info', 'test', out.stream));
    for (let i = 0; i < 60; i++) expect(locks.take(new Error(`Missing lock for job ${i}. moveToFinished`))).toBe(true);
    expect(locks.take(new Error('could not renew lock for job 7'))).toBe(true);
    expect(locks.take(new Error('Lock mismatch for job 8. Cmd moveToDelayed from active'))).toBe(true);
    expect(locks.take(new Error('a bug'))).toBe(false);
    expect(out.text()).toBe('');
    jest.advanceTimersByTime(10_000);
    const lines = out
      .text()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { lostLocks: number; level: number });
    expect(lines).toEqual([expect.objectContaining({ lostLocks: 62, level: 40 })]);
    expect(locks.total).toBe(62);
    locks.close();
  });
});
