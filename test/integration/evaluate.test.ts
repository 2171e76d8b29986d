import { runCliCaptured } from '../support/cli';
import { DIMENSION_NAMES, DIMENSIONS, TASK_COMPLEXITY, type Choice, type Dimension, type TaskComplexity } from '../../shared/domain/arms';
import { createEngine } from '../../shared/domain/engine/engine';
import type { CompiledPopulation } from '../../shared/domain/engine/population-model';
import type { Environment } from '../../shared/domain/environment';
import { createAccount, type Account } from '../../shared/accounts/account.repository';
import { createTestEnv, type TestEnv } from '../support/test-env';

let env: TestEnv;
let acme: Account;
let other: Account;
let empty: Account;
let best: Record<TaskComplexity, Choice>;
const engine = createEngine();
let acmePrior: CompiledPopulation;

const PINNED = { framing: 1, style: 1, complexityHandling: 1, encouragement: 1 };
/** Uniform random picks one of 180 combinations; these probabilities make the propensity 1/180 too. */
const UNIFORM_LIKE = { framing: 1 / 5, style: 1 / 4, complexityHandling: 1 / 3, encouragement: 1 / 3 };

/** `choice` with another value in one dimension. */
function shift(choice: Choice, dim: Dimension): Choice {
  const values = DIMENSIONS[dim].values as readonly string[];
  return { ...choice, [dim]: values[(values.indexOf(choice[dim]) + 1) % values.length] } as Choice;
}

let seq = 0;
/** A logged decision and, unless `reward` is null, its outcome (stored under `outcomeTenant`, default the same tenant). */
async function insertEvent(
  account: Account,
  environment: Environment,
  e: { complexity?: TaskComplexity; choice: Choice; probabilities: unknown; reward: number | null; issuedAt: string },
  outcomeTenant: { accountId: string; environment: Environment } = { accountId: account.id, environment },
) {
  const requestId = `req_eval_${++seq}`;
  await env.db
    .insertInto('decisions')
    .values({
      request_id: requestId,
      account_id: account.id,
      environment,
      user_id: `user-${seq % 3}`,
      chosen: JSON.stringify(e.choice),
      probabilities: JSON.stringify(e.probabilities),
      context: JSON.stringify({ complexity: e.complexity, taskType: 'report' }),
      explored: JSON.stringify([]),
      confidence: 0.5,
      issued_at: e.issuedAt,
    })
    .execute();
  if (e.reward === null) return;
  await env.db
    .insertInto('outcomes')
    .values({
      request_id: requestId,
      account_id: outcomeTenant.accountId,
      environment: outcomeTenant.environment,
      user_id: `user-${seq % 3}`,
      issued_at: e.issuedAt,
      fields: JSON.stringify({ started: true }),
      reward: e.reward,
      received_at: e.issuedAt,
    })
    .execute();
}

/** A population prior in which `favourite` is clearly best at high complexity (every other value of each dimension does worse). */
function learnedPrior(favourite: Choice) {
  const worse = DIMENSION_NAMES.reduce(shift, favourite);
  let prior = engine.emptyPrior();
  for (let round = 0; round < 5; round++) {
    const delta = engine.emptyDelta();
    for (let i = 0; i < 20; i++) {
      for (const [choice, reward] of [
        [favourite, 1],
        [worse, 0],
      ] as const) {
        const before = engine.initialState(prior);
        const feedback = { context: { taskComplexity: 'high' as const }, choice, probabilities: PINNED, reward, started: reward > 0.5 };
        const after = engine.update(before, feedback, prior);
        engine.observe(delta, prior, { before, after, feedback });
      }
    }
    prior = engine.mergePrior(prior, delta);
  }
  return prior;
}

const cli = (...argv: string[]) => runCliCaptured(argv, env.processEnv());

async function evaluateJson(...argv: string[]) {
  const result = await cli('evaluate', ...argv, '--json');
  expect(result).toMatchObject({ code: 0, err: '' });
  expect(result.out.trim().split('\n')).toHaveLength(1);
  return JSON.parse(result.out);
}

beforeAll(async () => {
  env = await createTestEnv();
  acme = await createAccount(env.db, 'eval-acme', 'pro');
  other = await createAccount(env.db, 'eval-other', 'starter');
  empty = await createAccount(env.db, 'eval-empty', 'starter');
  const favourite: Choice = { framing: 'curiosity', style: 'playful', complexityHandling: 'whole', encouragement: 'enthusiastic' };
  const prior = learnedPrior(favourite);
  acmePrior = prior;
  await env.db
    .insertInto('population_priors')
    .values({ account_id: acme.id, environment: 'live', prior: JSON.stringify(prior.sums) })
    .execute();
  best = Object.fromEntries(TASK_COMPLEXITY.map((c) => [c, engine.populationBest(prior, { taskComplexity: c })])) as typeof best;
  // The fixture is only meaningful if the stored prior changes the population best.
  expect(best.high).toEqual(favourite);
  expect(engine.populationBest(engine.emptyPrior(), { taskComplexity: 'high' })).not.toEqual(favourite);

  const live = (e: Parameters<typeof insertEvent>[2]) => insertEvent(acme, 'live', e);
  // Counted (acme, live). Population-best weights 2, 4, 0, 1; uniform weights 1/90, 1/45, 1, 1/180.
  await live({
    complexity: 'high',
    choice: best.high,
    probabilities: { ...PINNED, framing: 0.5 },
    reward: 1,
    issuedAt: '2026-10-15T12:00:00Z',
  });
  await live({
    complexity: 'high',
    choice: best.high,
    probabilities: { ...PINNED, framing: 0.5, style: 0.5 },
    reward: 0.5,
    issuedAt: '2026-11-02T08:00:00Z',
  });
  await live({
    complexity: 'low',
    choice: shift(best.low, 'encouragement'),
    probabilities: UNIFORM_LIKE,
    reward: 1,
    issuedAt: '2026-11-03T08:00:00Z',
  });
  await live({ complexity: 'medium', choice: best.medium, probabilities: PINNED, reward: 0.2, issuedAt: '2026-11-04T08:00:00Z' });
  // Not counted: no outcome yet; unreadable probabilities (skipped); an outcome stored under another account.
  await live({ complexity: 'high', choice: best.high, probabilities: PINNED, reward: null, issuedAt: '2026-11-05T08:00:00Z' });
  await live({
    complexity: 'high',
    choice: best.high,
    probabilities: { ...PINNED, framing: 2 },
    reward: 1,
    issuedAt: '2026-11-05T09:00:00Z',
  });
  await insertEvent(
    acme,
    'live',
    { complexity: 'high', choice: best.high, probabilities: PINNED, reward: 0, issuedAt: '2026-11-05T10:00:00Z' },
    { accountId: other.id, environment: 'live' },
  );
  // Other tenants: acme's test environment and another account's live environment.
  await insertEvent(acme, 'test', {
    complexity: 'high',
    choice: best.high,
    probabilities: PINNED,
    reward: 0,
    issuedAt: '2026-11-02T08:00:00Z',
  });
  await insertEvent(other, 'live', {
    complexity: 'high',
    choice: best.high,
    probabilities: PINNED,
    reward: 0,
    issuedAt: '2026-11-02T08:00:00Z',
  });
});
afterAll(() => env.close());

describe('cos evaluate (offline evaluation)', () => {
  it('estimates the service, uniform random and the population best from one tenant’s logged events', async () => {
    const report = await evaluateJson('--account', 'eval-acme', '--env', 'live');
    expect(report).toMatchObject({ account: 'eval-acme', accountId: acme.id, environment: 'live', since: null, events: 4, skipped: 1 });
    expect(report.policies).toEqual({
      // r = [1, .5, 1, .2]: mean .675.
      service: { mean: 0.675, ci: [0.2881, 1.0619], events: 4 },
      uniformRandom: {
        // Σ w·r = (2 + 2 + 180 + .2)/180 over 4 events; SNIPS = 184.2 / 187.
        ips: { value: 0.2558, ci: [-0.2304, 0.742], events: 4 },
        snips: { value: 0.985, ci: [0.9493, 1.0208], events: 4 },
      },
      populationBest: {
        priorVersion: expect.any(Number),
        choiceByComplexity: best,
        choiceWithoutComplexity: engine.populationBest(acmePrior, {}),
        matchingEvents: 3,
        // w·r = [2, 2, 0, .2]: IPS 4.2/4, SNIPS 4.2/7.
        ips: { value: 1.05, ci: [-0.028, 2.128], events: 4 },
        snips: { value: 0.6, ci: [0.3257, 0.8743], events: 3 },
      },
    });
    expect(report.lift).toEqual({
      uniformRandom: { difference: -0.31, ratio: 0.6853 },
      populationBest: { difference: 0.075, ratio: 1.125 },
    });
  });

  it('counts only decisions issued at or after --since', async () => {
    const report = await evaluateJson('--account', acme.id, '--env', 'live', '--since', '2026-11-01');
    expect(report).toMatchObject({ since: '2026-11-01T00:00:00.000Z', events: 3, skipped: 1 });
    expect(report.policies.service).toEqual({ mean: 0.5667, ci: [0.1093, 1.024], events: 3 });
    expect(report.policies.populationBest).toMatchObject({
      matchingEvents: 2,
      ips: { value: 0.7333, ci: [-0.5131, 1.9798], events: 3 },
      snips: { value: 0.44, ci: [0.307, 0.573], events: 2 },
    });
    const later = await evaluateJson('--account', acme.id, '--env', 'live', '--since', '2026-11-03T09:00:00+01:00');
    expect(later).toMatchObject({ since: '2026-11-03T08:00:00.000Z', events: 2 });
  });

  it('keeps environments apart: the test environment has its own events and no stored prior', async () => {
    const report = await evaluateJson('--account', 'eval-acme', '--env', 'test');
    expect(report).toMatchObject({ events: 1, skipped: 0, policies: { service: { mean: 0, ci: null, events: 1 } } });
    expect(report.policies.populationBest.priorVersion).toBeNull();
  });

  it('counts decisions made without a task complexity against what the population serves such contexts', async () => {
    const account = await createAccount(env.db, 'eval-no-complexity', 'starter');
    const favourite = engine.populationBest(engine.emptyPrior(), {});
    await insertEvent(account, 'live', { choice: favourite, probabilities: PINNED, reward: 1, issuedAt: '2026-11-02T08:00:00Z' });
    await insertEvent(account, 'live', {
      choice: shift(favourite, 'style'),
      probabilities: PINNED,
      reward: 0,
      issuedAt: '2026-11-02T09:00:00Z',
    });
    const report = await evaluateJson('--account', account.name, '--env', 'live');
    expect(report).toMatchObject({ events: 2, skipped: 0 });
    expect(report.policies.populationBest).toMatchObject({ choiceWithoutComplexity: favourite, matchingEvents: 1 });
    const { out } = await cli('evaluate', '--account', account.name, '--env', 'live');
    expect(out).not.toMatch(/skipped/);
    expect(out).toMatch(/no complexity given/);
  });

  it('prints a table with both estimators per policy', async () => {
    const { code, out, err } = await cli('evaluate', '--account', 'eval-acme', '--env', 'live');
    expect({ code, err }).toEqual({ code: 0, err: '' });
    expect(out).toMatch(/^policy\s+estimator\s+value\s+95% CI\s+events$/m);
    expect(out).toMatch(/^service \(logged\)\s+mean\s+0\.6750\s+\[0\.2881, 1\.0619\]\s+4$/m);
    expect(out).toMatch(/^population best\s+SNIPS\s+0\.6000\s+\[0\.3257, 0\.8743\]\s+3$/m);
    expect(out).toMatch(/^IPS weights each logged reward/m);
  });

  it('says there is nothing to evaluate when the tenant has no events (exit 0, null estimates)', async () => {
    const text = await cli('evaluate', '--account', 'eval-empty', '--env', 'live');
    expect(text).toMatchObject({ code: 0, err: '' });
    expect(text.out).toMatch(/no decisions with an outcome: nothing to evaluate/);
    const report = await evaluateJson('--account', empty.name, '--env', 'live');
    expect(report).toMatchObject({
      events: 0,
      skipped: 0,
      policies: {
        service: null,
        uniformRandom: { ips: null, snips: null },
        populationBest: { matchingEvents: 0, ips: null, snips: null, priorVersion: null },
      },
      lift: { uniformRandom: null, populationBest: null },
    });
  });

  it.each([
    [['--env', 'live'], /--account is required/],
    [['--account', 'eval-acme'], /--env is required/],
    [['--account', 'eval-acme', '--env', 'prod'], /invalid --env/],
    [['--account', 'eval-acme', '--env', 'live', '--since', 'yesterday'], /invalid --since/],
    [['--account', 'eval-acme', '--env', 'live', '--since', '2026-02-30'], /invalid --since/],
    [['--account', 'nobody', '--env', 'live'], /no account nobody/],
  ])('is a usage error (exit 2, one line on stderr) for %j', async (argv, message) => {
    const result = await cli('evaluate', ...argv);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(message);
    expect(result.err.trim().split('\n')).toHaveLength(1);
    expect(result.out).toBe('');
  });
});
