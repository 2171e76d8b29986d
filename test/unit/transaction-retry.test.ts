import { backoffMs, retryTransaction, TRANSACTION_ATTEMPTS } from '../../shared/db/transaction-retry';

// A transaction rolled back for a deadlock or serialization conflict runs again after a growing, jittered wait.

function pgError(code: string): Error {
  return Object.assign(new Error(`postgres error ${code}`), { code });
}

function failingThen<T>(errors: Error[], value: T) {
  const calls = { count: 0 };
  const run = async () => {
    const error = errors[calls.count++];
    if (error) throw error;
    return value;
  };
  return { run, calls };
}

describe('retryTransaction', () => {
  it('reruns after a deadlock and a serialization failure, waiting twice as long the second time', async () => {
    const waits: number[] = [];
    const { run, calls } = failingThen([pgError('40P01'), pgError('40001')], 'done');
    const result = await retryTransaction(run, { baseDelayMs: 20, random: () => 0.5, sleep: async (ms) => void waits.push(ms) });
    expect(result).toBe('done');
    expect(calls.count).toBe(3);
    expect(waits).toEqual([15, 30]);
  });

  it('gives up after TRANSACTION_ATTEMPTS runs with the last error', async () => {
    const errors = Array.from({ length: TRANSACTION_ATTEMPTS }, () => pgError('40P01'));
    const { run, calls } = failingThen(errors, 'never');
    await expect(retryTransaction(run, { sleep: async () => undefined })).rejects.toBe(errors[TRANSACTION_ATTEMPTS - 1]);
    expect(calls.count).toBe(TRANSACTION_ATTEMPTS);
  });

  it('does not rerun on any other error', async () => {
    const unique = pgError('23505');
    const waits: number[] = [];
    const { run, calls } = failingThen([unique], 'never');
    await expect(retryTransaction(run, { sleep: async (ms) => void waits.push(ms) })).rejects.toBe(unique);
    expect(calls.count).toBe(1);
    expect(waits).toEqual([]);
  });
});

describe('backoffMs', () => {
  it('doubles per rerun and keeps a random factor between ½ and 1 of it', () => {
    expect(backoffMs(1, 20, () => 0)).toBe(10);
    expect(backoffMs(1, 20, () => 0.999)).toBeCloseTo(19.99);
    expect(backoffMs(2, 20, () => 0)).toBe(20);
    expect(backoffMs(3, 20, () => 0)).toBe(40);
  });
});
