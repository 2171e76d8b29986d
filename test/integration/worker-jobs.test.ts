import { Queue } from 'bullmq';
import { EVENTS_QUEUE, JOBS } from '../../shared/jobs/catalog';
import { RETRY_BACKOFF, UNBOUNDED_ATTEMPTS } from '../../shared/jobs/retry';
import { capture, runCliCaptured } from '../support/cli';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';
import { createLogger } from '../../shared/logger/logger';
import { readRequestIdClaims } from '../../shared/keys/request-id';
import { DECISION_NOT_FOUND_ATTEMPTS, PARKED_MESSAGE } from '../../worker/job-failures';
import type { RunningWorker } from '../../worker/worker';
import { sampleValue } from '../support/prometheus';

/** The job id of the decision batch a requestId was issued in. */
const decisionBatchJobId = (requestId: string) => JOBS.decisions.jobId({ batchId: readRequestIdClaims(requestId)!.decisionBatch! });

let h: Harness;
let key: string;
/** Every events-queue partition, then the legacy queue. */
let queues: Queue[];
/** The partition a requestId's user's events go to. */
const queueOf = (requestId: string) => queues[h.env.keys.queuePartition(readRequestIdClaims(requestId)!.userHash)]!;
let worker: RunningWorker;
/** What the worker logs at warn level and above. */
const workerLog = capture();
beforeAll(async () => {
  h = await startHarness();
  key = await h.key('jobs', 'test');
  queues = h.env.keys.eventQueuePrefixes.map((prefix) => new Queue(EVENTS_QUEUE, { connection: h.env.redis, prefix }));
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
    for (const spec of [JOBS.decisions, JOBS.outcomes, JOBS.decision, JOBS.outcome, JOBS.testDataReset]) {
      expect(spec.options).toMatchObject({ attempts: UNBOUNDED_ATTEMPTS, backoff: { type: RETRY_BACKOFF } });
    }
    // A usage flush that fails is redone by the next tick: a few quick retries, then dropped.
    expect(JOBS.usageFlush.options).toMatchObject({ attempts: 3, backoff: { type: 'exponential' }, removeOnFail: true });
    for (const spec of Object.values(JOBS)) expect(spec.options.removeOnComplete).toBeTruthy();
  });

  it('puts a job with an invalid payload in the failed set without retries, where the operator CLI lists it', async () => {
    const queue = queues[3]!;
    await queue.add('outcome', { requestId: 42 }, { jobId: 'broken-outcome', attempts: 5 });
    await eventually(async () => (await queue.getJob('broken-outcome'))?.isFailed());
    const job = await queue.getJob('broken-outcome'); // read again: the state is settled now
    expect(job!.attemptsMade).toBe(1);
    expect(job!.failedReason).toMatch(/invalid outcome payload/);
    expect(logLines(PARKED_MESSAGE)).toContainEqual(expect.objectContaining({ level: 50, jobId: 'broken-outcome', name: 'outcome' }));
    const { code, out } = await runCliCaptured(['jobs', 'failed', '--json'], h.env.processEnv());
    expect(code).toBe(0);
    const listed = JSON.parse(out);
    expect(listed.counts.failed).toBeGreaterThanOrEqual(1);
    expect(listed.data.map((j: { id: string }) => j.id)).toContain('broken-outcome');
  });

  it('applies the good jobs of a batch even when one job in it fails', async () => {
    const rid = (await h.http().post('/v1/context').set(bearer(key)).send({ userId: 'batch-good', task: 't', complexity: 'low' })).body
      .requestId;
    const queue = queueOf(rid);
    const batch = await eventually(() => queue.getJob(decisionBatchJobId(rid)));
    const decision = { data: JOBS.decisions.schema.parse(batch!.data).decisions.find((d) => d.requestId === rid)! };
    // A NUL byte cannot be stored in Postgres text: this decision fails inside the batch.
    const poison = { ...decision.data, requestId: `${rid}x`, userId: 'bad\u0000user' };
    await queue.addBulk([
      { name: 'decision', data: poison, opts: { jobId: 'poison-decision', attempts: 1 } },
      {
        name: 'outcome',
        data: {
          accountId: decision.data.accountId,
          environment: 'test',
          requestId: rid,
          signals: { started: true },
          receivedAt: Date.now(),
        },
        opts: { jobId: 'good-outcome' },
      },
    ]);
    await eventually(async () => (await h.http().get('/v1/profile/batch-good').set(bearer(key))).body.interactionCount === 1);
    await eventually(async () => (await queue.getJob('poison-decision'))?.isFailed());
  });

  it('applies an outcome whose decision job has not run yet, from the queued decision', async () => {
    const rid = (await h.http().post('/v1/context').set(bearer(key)).send({ userId: 'early-outcome', task: 't', complexity: 'high' })).body
      .requestId;
    const queue = queueOf(rid);
    // Simulate a decision batch still waiting: remove the stored decision, then re-add its
    // batch job as delayed so the outcome arrives first.
    const decisionId = decisionBatchJobId(rid);
    await eventually(async () => (await queue.getJob(decisionId))?.isCompleted());
    const decision = await queue.getJob(decisionId); // read again once settled
    await h.env.db.deleteFrom('decisions').where('request_id', '=', rid).execute();
    await decision!.remove();
    await queue.add('decisions', decision!.data, { ...JOBS.decisions.options, jobId: decisionId, delay: 60_000 });
    expect((await h.http().post('/v1/outcome').set(bearer(key)).send({ requestId: rid, started: true })).status).toBe(202);
    await eventually(async () => (await h.http().get('/v1/profile/early-outcome').set(bearer(key))).body.interactionCount === 1);
    const row = await h.env.db.selectFrom('decisions').select('user_id').where('request_id', '=', rid).executeTakeFirst();
    expect(row?.user_id).toBe('early-outcome');
  });

  it('applies what an older API left in the unpartitioned events queue: decisions, and outcomes there or in a partition whose decision waits there', async () => {
    const legacy = queues[queues.length - 1]!;
    expect(legacy.opts.prefix).toBe(`${h.env.prefix}:q`);
    const issue = async (userId: string) =>
      (await h.http().post('/v1/context').set(bearer(key)).send({ userId, task: 't', complexity: 'low' })).body.requestId as string;
    const [viaPartition, viaLegacy] = [await issue('upgraded-a'), await issue('upgraded-b')];
    // Their decisions as an older API would have left them: queued (delayed, so the outcomes
    // come first) in the unpartitioned queue, not in Postgres.
    for (const rid of [viaPartition, viaLegacy]) {
      const decisionId = decisionBatchJobId(rid);
      await eventually(async () => (await queueOf(rid).getJob(decisionId))?.isCompleted());
      const job = (await queueOf(rid).getJob(decisionId))!;
      await h.env.db.deleteFrom('decisions').where('request_id', '=', rid).execute();
      await job.remove();
      await legacy.add('decisions', job.data, { ...JOBS.decisions.options, jobId: decisionId, delay: 60_000 });
    }
    // One outcome posted now (its user's partition), one left in the old queue by the older API.
    expect((await h.http().post('/v1/outcome').set(bearer(key)).send({ requestId: viaPartition, started: true })).status).toBe(202);
    const accountId = (await legacy.getJob(decisionBatchJobId(viaLegacy)))!.data.decisions[0].accountId as string;
    const batchId = 'feedfacefeedface';
    await legacy.add(
      'outcomes',
      { batchId, outcomes: [{ accountId, environment: 'test', requestId: viaLegacy, signals: { started: true }, receivedAt: Date.now() }] },
      { ...JOBS.outcomes.options, jobId: JOBS.outcomes.jobId({ batchId }) },
    );
    for (const userId of ['upgraded-a', 'upgraded-b']) {
      await eventually(async () => (await h.http().get(`/v1/profile/${userId}`).set(bearer(key))).body.interactionCount === 1);
    }
    const stored = await h.env.db.selectFrom('decisions').select('user_id').where('request_id', 'in', [viaPartition, viaLegacy]).execute();
    expect(stored.map((row) => row.user_id).sort()).toEqual(['upgraded-a', 'upgraded-b']);
    expect(await (await legacy.getJob(JOBS.outcomes.jobId({ batchId })))!.getState()).toBe('completed');
  });

  it('parks an outcome whose decision is in neither Postgres nor the queue after 3 attempts, with a line to alert on, instead of retrying it forever', async () => {
    const rid = (await h.http().post('/v1/context').set(bearer(key)).send({ userId: 'decision-lost', task: 't', complexity: 'low' })).body
      .requestId;
    const queue = queueOf(rid);
    const decisionId = decisionBatchJobId(rid);
    await eventually(async () => (await queue.getJob(decisionId))?.isCompleted());
    // The decision is lost as when Redis loses data and Postgres is restored from an older backup.
    await h.env.db.deleteFrom('decisions').where('request_id', '=', rid).execute();
    await (await queue.getJob(decisionId))!.remove();
    const parkedBefore = (await parkedEvents()) ?? 0;
    expect((await h.http().post('/v1/outcome').set(bearer(key)).send({ requestId: rid, started: true })).status).toBe(202);
    const job = await eventually(async () =>
      (await queue.getFailed()).find(
        (j) => j.name === 'outcomes' && JOBS.outcomes.schema.parse(j.data).outcomes.some((o) => o.requestId === rid),
      ),
    );
    expect(job.attemptsMade).toBe(DECISION_NOT_FOUND_ATTEMPTS); // kept with its payload for 30 days
    expect(job.failedReason).toMatch(/in neither Postgres nor the queue after 3 attempts/);
    expect(await parkedEvents()).toBe(parkedBefore + 1);
    expect(logLines(PARKED_MESSAGE)).toContainEqual(
      expect.objectContaining({ level: 50, jobId: job.id, name: 'outcomes', attempts: DECISION_NOT_FOUND_ATTEMPTS }),
    );
    expect((await h.http().get('/v1/profile/decision-lost').set(bearer(key))).body.interactionCount).toBe(0);
  });

  it('replaces an unreadable learner state with a fresh one, logs it without the user id, and keeps counting outcomes', async () => {
    const userId = 'state-corrupted';
    const first = (await h.http().post('/v1/context').set(bearer(key)).send({ userId, task: 't', complexity: 'low' })).body.requestId;
    expect((await h.http().post('/v1/outcome').set(bearer(key)).send({ requestId: first, started: true })).status).toBe(202);
    await eventually(async () => (await h.http().get(`/v1/profile/${userId}`).set(bearer(key))).body.interactionCount === 1);
    // A state no engine version wrote (a bug or a bad manual edit): fields missing, its history not a list.
    await h.env.db
      .updateTable('profiles')
      .set({ state: JSON.stringify({ learner: 'engine-v2', history: 'lost' }) as never })
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
    expect(row.state).toMatchObject({ learner: 'engine-v2', outcomes: 1, history: [expect.any(Array)] });
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
