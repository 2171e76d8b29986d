import { spawnSync } from 'node:child_process';
import path from 'node:path';

/**
 * `npm run bench:live` end to end on a tiny run: it starts its own Postgres, Redis, api and
 * worker, drives them over HTTP, prints one JSON object on stdout with --json, and finds every
 * accepted outcome applied.
 */
it('drives the built service over HTTP and prints one JSON object', () => {
  const script = path.join(__dirname, '../../dist/scripts/bench-live.js');
  const run = spawnSync(process.execPath, [script, '--users', '4', '--interactions', '6', '--seed', '5', '--json'], {
    encoding: 'utf8',
    timeout: 90_000,
  });
  expect(run.status).toBe(0);
  const result = JSON.parse(run.stdout);
  expect(result).toMatchObject({ seed: 5, users: 4, interactions: 6, workers: 1, decisions: 24, appliedOutcomes: 24 });
  expect(result.staleDecisions).toBeGreaterThanOrEqual(0);
  expect(result.staleDecisions).toBeLessThanOrEqual(24);
  for (const name of ['http', 'inProcess', 'oracle']) {
    const m = result.policies[name];
    expect(m.meanReward_1_10).toBeNull(); // 6 interactions: too short for 1–10
    expect(m.coldStartReward).toBeGreaterThanOrEqual(0);
    expect(m.coldStartReward).toBeLessThanOrEqual(1);
  }
  expect(result.policies.oracle.ece).toBe(0);
  // The in-process engine's spread over its random streams.
  expect(result.inProcessRuns).toBe(8);
  expect(result.policies.inProcessSd.coldStartReward).toBeGreaterThanOrEqual(0);
  expect(result.policies.inProcessSd.meanReward_11_40).toBeNull();
}, 120_000);

it.each([
  ['a number out of range', ['--users', '0']],
  ['an unknown world', ['--world', 'flat']],
  ['an inherited property name as a world', ['--world', 'constructor']],
])('refuses %s with the usage', (_, args) => {
  const script = path.join(__dirname, '../../dist/scripts/bench-live.js');
  const run = spawnSync(process.execPath, [script, ...args], { encoding: 'utf8', timeout: 30_000 });
  expect(run.status).toBe(1);
  expect(run.stderr).toMatch(/usage: bench-live/);
  expect(run.stdout).toBe('');
});
