import { Queue } from 'bullmq';
import { EVENTS_QUEUE, JOBS } from '../../shared/jobs/catalog';
import { RETRY_BACKOFF, UNBOUNDED_ATTEMPTS } from '../../shared/jobs/retry';
import { capture, runCliCaptured } from '../support/cli';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';
import { createLogger } from '../../shared/logger/logger';
import { findAccount } from '../../shared/accounts/account.repository';
import { readRequestIdClaims } from '../../shared/ids/request-id';
import { PARKED_MESSAGE } from '../../worker/job-failures';
import type { RunningWorker } from '../../worker/worker';
import { sampleValue } from '../support/prometheus';
import { STATE_FORMAT } from '../../shared/domain/engine/state';

/** The stored decision of a requestId, once the worker has logged it. */
const storedDecision = (requestId: string) =>
  eventually(() => h.env.db.selectFrom('decisions').selectAll().where('request_id', '=', requestId).executeTakeFirst());

let h: Harness;
let key: string;
/** Every events-queue partition. */
let queues: Queue[];
/** The partition a requestId's user's events go to. */
const queueOf = (requestId: string) => queues[h.env.keys.queuePartition(readRequestIdClaims(requestId)!.userHash)]!;
let worker: RunningWorker;
/** What the worker logs at warn level and above. */
const workerLog = capture();
beforeAll(async () => {
  h = await startHarness();
  key = await h.key('jobs', 'test');
  queues = h.env.keys.queuePrefixes.map((prefix) => new Queue(EVENTS_QUEUE, { connection: h.env.redis, prefix }));
  // Retries 100 times faster than by default: a job that should be parked is seen parked soon.
  worker = h.startWorker(createLogger('warn', 'worker-under-test', workerLog.stream), {
    JOB_RETRY_DELAY: '10ms',
    JOB_RETRY_MAX_DELAY: '300ms',
  });
});

/** Event jobs the worker has parked (its metrics' final failures). */
const parkedEvents = async () =>
  sampleValue(await worker.metrics.registry.metrics(), 'cos_worker_jobs_failed_total', { queue: 'events', final: 'true' });

/** The worker's log lines (JSON) with this message. */
const logLines = (message: string) =>
  workerLog
    .text()
    .split('\n')
    .filter((line) => line.includes(message))
    .map((line) => JSON.parse(line));
afterAll(async () => {
  await Promise.all(queues.map((queue) => queue.close()));
  await h.close();
});

describe('worker job handling', () => {
  it('retries decisions, outcomes and the monthly reset without an end, with the capped backoff, and bounds every history', () => {
    for (const spec of [JOBS.decisions, JOBS.outcomes, JOBS.testDataReset]) {
      expect(spec.options).toMatchObject({ attempts: UNBOUNDED_ATTEMPTS, backoff: { type: RETRY_BACKOFF } });
    }
    // A usage flush that fails is redone by the next tick: a few quick retries, then dropped.
    expect(JOBS.usageFlush.options).toMatchObject({ attempts: 3, backoff: { type: 'exponential' }, removeOnFail: true });
    for (const spec of Object.values(JOBS)) expect(spec.options.removeOnComplete).toBeTruthy();
  });

  it('puts a job with an invalid payload in the failed set without retries, where the operator CLI lists it', async () => {
    const queue = queues[3]!;
    await queue.add('outcomes', { batchId: 'not-hex', outcomes: [{ requestId: 42 }] }, { jobId: 'broken-outcome', attempts: 5 });
    await eventually(async () => (await queue.getJob('broken-outcome'))?.isFailed());
    const job = await queue.getJob('broken-outcome'); // read again: the state is settled now
    expect(job!.attemptsMade).toBe(1);
    expect(job!.failedReason).toMatch(/invalid outcomes payload/);
    expect(logLines(PARKED_MESSAGE)).toContainEqual(expect.objectContaining({ level: 50, jobId: 'broken-outcome', name: 'outcomes' }));
    const { code, out } = await runCliCaptured(['jobs', 'failed', '--json'], h.env.processEnv());
    expect(code).toBe(0);
    const listed = JSON.parse(out);
    expect(listed.counts.failed).toBeGreaterThanOrEqual(1);
    expect(listed.data.map((j: { id: string }) => j.id)).toContain('broken-outcome');
  });

  it('applies the good jobs of a batch even when one job in it fails', async () => {
    const rid = (await h.http().post('/v1/context').set(bearer(key)).send({ userId: 'batch-good', task: 't', complexity: 'low' })).body
      .requestId;
    const stored = await storedDecision(rid);
    const queue = queueOf(rid);
    // A NUL byte cannot be stored in Postgres text: this decision fails inside the batch.
    const poison = {
      accountId: stored.account_id,
      environment: 'test' as const,
      requestId: `${rid}x`,
      userId: 'bad\u0000user',
      generation: 'g',
      context: {},
      choice: stored.chosen,
      probabilities: stored.probabilities,
      explored: [],
      confidence: 0.5,
      issuedAt: Date.now(),
    };
    await queue.addBulk([
      { name: 'decisions', data: { batchId: '00000000000000aa', decisions: [poison] }, opts: { jobId: 'poison-decision', attempts: 1 } },
      {
        name: 'outcomes',
        data: {
          batchId: '00000000000000bb',
          outcomes: [
            { accountId: stored.account_id, environment: 'test', requestId: rid, signals: { started: true }, receivedAt: Date.now() },
          ],
        },
        opts: { jobId: 'good-outcome' },
      },
    ]);
    await eventually(async () => (await h.http().get('/v1/profile/batch-good').set(bearer(key))).body.interactionCount === 1);
    await eventually(async () => (await queue.getJob('poison-decision'))?.isFailed());
    // They were one batch: it failed as a whole, and its jobs were then applied one by one.
    expect(logLines('batch failed; applying its jobs one by one')).toContainEqual(expect.objectContaining({ size: 2 }));
  });

  it('applies an outcome whose decision was never logged (its API process died first), from the decision its requestId carries', async () => {
    const res = await h
      .http()
      .post('/v1/context')
      .set(bearer(key))
      .send({ userId: 'unlogged', task: 't', complexity: 'high', taskType: 'mail' });
    const rid = res.body.requestId as string;
    // As if the process had died before sending its decision batch: no decision anywhere.
    await storedDecision(rid);
    await h.env.db.deleteFrom('decisions').where('request_id', '=', rid).execute();
    await queueOf(rid).clean(0, 1000, 'completed');
    expect((await h.http().post('/v1/outcome').set(bearer(key)).send({ requestId: rid, started: true, completed: true })).status).toBe(202);
    await eventually(async () => (await h.http().get('/v1/profile/unlogged').set(bearer(key))).body.interactionCount === 1);
    const outcome = await h.env.db.selectFrom('outcomes').select(['user_id', 'reward']).where('request_id', '=', rid).executeTakeFirst();
    expect(outcome).toEqual({ user_id: 'unlogged', reward: expect.any(Number) });
    // The learner was told the choice the caller was given, under the context it asked for.
    const versions = await h.env.db.selectFrom('profile_versions').select('cause').where('user_id', '=', 'unlogged').execute();
    expect(versions).toEqual([{ cause: 'outcome' }]);
  });

  it('parks an outcome job whose requestId holds no decision of its tenant at once, with a line to alert on, instead of retrying it', async () => {
    // A requestId issued to another account, enqueued as this one's: data no retry can mend.
    const other = await h.key('jobs-other', 'test');
    const rid = (await h.http().post('/v1/context').set(bearer(other)).send({ userId: 'misfiled', task: 't' }).expect(200)).body.requestId;
    const account = (await findAccount(h.env.db, 'jobs'))!;
    const batchId = 'fedcba9876543210';
    const parkedBefore = (await parkedEvents()) ?? 0;
    await queueOf(rid).add(
      'outcomes',
      {
        batchId,
        outcomes: [{ accountId: account.id, environment: 'test', requestId: rid, signals: { started: true }, receivedAt: Date.now() }],
      },
      { ...JOBS.outcomes.options, jobId: JOBS.outcomes.jobId({ batchId }) },
    );
    const job = await eventually(async () => (await queueOf(rid).getFailed()).find((j) => j.id === JOBS.outcomes.jobId({ batchId })));
    expect(job.attemptsMade).toBe(1); // kept with its payload for 30 days
    expect(job.failedReason).toMatch(/no decision of this tenant sealed in/);
    expect(await parkedEvents()).toBe(parkedBefore + 1);
    expect(logLines(PARKED_MESSAGE)).toContainEqual(expect.objectContaining({ level: 50, jobId: job.id, name: 'outcomes', attempts: 1 }));
  });

  it('replaces an unreadable learner state with a fresh one, logs it without the user id, and keeps counting outcomes', async () => {
    const userId = 'state-corrupted';
    const first = (await h.http().post('/v1/context').set(bearer(key)).send({ userId, task: 't', complexity: 'low' })).body.requestId;
    expect((await h.http().post('/v1/outcome').set(bearer(key)).send({ requestId: first, started: true })).status).toBe(202);
    await eventually(async () => (await h.http().get(`/v1/profile/${userId}`).set(bearer(key))).body.interactionCount === 1);
    // A state no engine version wrote (a bug or a bad manual edit): fields missing, its history not a list.
    await h.env.db
      .updateTable('profiles')
      .set({ state: JSON.stringify({ learner: STATE_FORMAT, history: 'lost' }) as never })
      .where('user_id', '=', userId)
      .execute();
    const second = (await h.http().post('/v1/context').set(bearer(key)).send({ userId, task: 't', complexity: 'low' })).body.requestId;
    expect((await h.http().post('/v1/outcome').set(bearer(key)).send({ requestId: second, started: false })).status).toBe(202);
    const profile = await eventually(async () => {
      const body = (await h.http().get(`/v1/profile/${userId}`).set(bearer(key))).body;
      return body.interactionCount === 2 ? body : null;
    });
    expect(profile.profilePhase).toBe('learning');
    const row = await h.env.db.selectFrom('profiles').select('state').where('user_id', '=', userId).executeTakeFirstOrThrow();
    expect(row.state).toMatchObject({ learner: STATE_FORMAT, outcomes: 1, history: { reward: [expect.any(Number)] } });
    const warnings = workerLog
      .text()
      .split('\n')
      .filter((line) => line.includes('learner state was unreadable'))
      .map((line) => JSON.parse(line));
    expect(warnings).toEqual([
      expect.objectContaining({
        level: 40,
        accountId: expect.any(String),
        environment: 'test',
        userHash: expect.stringMatching(/^[0-9a-f]{16,}$/),
      }),
    ]);
    expect(warnings[0].issue).toMatch(/^outcomes: /); // the first field that failed, not its value
    expect(workerLog.text()).not.toContain(userId);
  });

  it('drops the decisions and outcomes of a user erased after they were issued', async () => {
    const rid = (await h.http().post('/v1/context').set(bearer(key)).send({ userId: 'erased-later', task: 't', complexity: 'low' })).body
      .requestId;
    await eventually(() => h.env.db.selectFrom('decisions').select('request_id').where('request_id', '=', rid).executeTakeFirst());
    expect((await h.http().delete('/v1/profile/erased-later').set(bearer(key))).status).toBe(204);
    expect((await h.http().post('/v1/outcome').set(bearer(key)).send({ requestId: rid, started: true })).status).toBe(202);
    const job = await eventually(async () =>
      (await queueOf(rid).getJobs(['completed'])).find(
        (j) => j.name === 'outcomes' && JOBS.outcomes.schema.parse(j.data).outcomes.some((o) => o.requestId === rid),
      ),
    );
    expect(job!.returnvalue).toMatch(/^1 dropped/);
    expect((await h.http().get('/v1/profile/erased-later').set(bearer(key))).status).toBe(404);
    const outcomes = await h.env.db.selectFrom('outcomes').select('request_id').where('user_id', '=', 'erased-later').execute();
    expect(outcomes).toEqual([]);
  });
});
