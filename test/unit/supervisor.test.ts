import { decideRestart, describeExit, NO_CRASHES, type CrashHistory, type RestartPolicy } from '../../scripts/supervisor';

const policy: RestartPolicy = {
  initialDelayMs: 500,
  maxDelayMs: 10_000,
  stableAfterMs: 30_000,
  crashLoopExits: 5,
  crashLoopWindowMs: 60_000,
};

/** Runs that each lasted `uptimeMs` and were restarted after the delay decided for them. */
function crashes(count: number, uptimeMs: number, history: CrashHistory = NO_CRASHES, from = 0) {
  const delays: number[] = [];
  let startedAt = from;
  let decision = decideRestart(history, { startedAt, exitedAt: startedAt + uptimeMs }, policy);
  for (let i = 0; ; i++) {
    if (!decision.restart) return { delays, decision, at: startedAt + uptimeMs };
    delays.push(decision.delayMs);
    if (i + 1 === count) return { delays, decision, at: startedAt + uptimeMs };
    startedAt += uptimeMs + decision.delayMs;
    decision = decideRestart(decision.history, { startedAt, exitedAt: startedAt + uptimeMs }, policy);
  }
}

describe('decideRestart', () => {
  it('doubles the delay from 0.5 s with each quick exit in a row, up to 10 s', () => {
    // 20 s runs: never stable, and never 5 exits within 60 s.
    expect(crashes(8, 20_000).delays).toEqual([500, 1000, 2000, 4000, 8000, 10_000, 10_000, 10_000]);
  });

  it('resets the backoff after a run that lasted 30 s', () => {
    const quick = crashes(3, 1000);
    expect(quick.delays).toEqual([500, 1000, 2000]);
    const stable = decideRestart(quick.decision.history, { startedAt: quick.at + 2000, exitedAt: quick.at + 2000 + 30_000 }, policy);
    expect(stable).toMatchObject({ restart: true, delayMs: 500 });
    // After the crash-loop window, so that only the backoff is in question.
    const next = decideRestart(stable.history, { startedAt: quick.at + 69_000, exitedAt: quick.at + 70_000 }, policy);
    expect(next).toMatchObject({ restart: true, delayMs: 1000 });
  });

  it('gives up at the 5th exit within 60 s', () => {
    const { delays, decision } = crashes(10, 0);
    expect(delays).toEqual([500, 1000, 2000, 4000]);
    expect(decision).toMatchObject({ restart: false, exitsInWindow: 5 });
  });

  it('forgets exits older than 60 s: 5 exits spread over more than a minute are no crash loop', () => {
    // 14 s runs plus the backoff: the 5th exit comes 63.5 s after the 1st.
    const { delays, decision } = crashes(5, 14_000);
    expect(delays).toEqual([500, 1000, 2000, 4000, 8000]);
    expect(decision.restart).toBe(true);
    expect(decision.history.exits.length).toBeLessThan(5);
  });

  it('counts exits after stable runs towards a crash loop too', () => {
    let history = NO_CRASHES;
    for (const at of [0, 1, 2, 3]) {
      const decision = decideRestart(history, { startedAt: at * 1000 - 40_000, exitedAt: at * 1000 }, policy);
      expect(decision).toMatchObject({ restart: true, delayMs: 500 });
      history = decision.history;
    }
    expect(decideRestart(history, { startedAt: -35_000, exitedAt: 4000 }, policy).restart).toBe(false);
  });
});

describe('describeExit', () => {
  it('names the code, the signal or the failed start', () => {
    expect(describeExit({ code: 1, signal: null })).toBe('code 1');
    expect(describeExit({ code: null, signal: 'SIGKILL' })).toBe('signal SIGKILL');
    expect(describeExit({ error: 'postgres exited with code 1' })).toBe('failed to start: postgres exited with code 1');
  });
});
