import { bearer, startHarness, type Harness } from '../support/harness';

let h: Harness;
let key: string;
beforeAll(async () => {
  h = await startHarness();
  key = await h.key('input-bounds', 'test');
});
afterAll(() => h.close());

/** `{"k":{"k":…1…}}` nested `levels` objects deep, built as text (JSON.stringify itself would overflow). */
const nestedObject = (levels: number) => `${'{"k":'.repeat(levels)}1${'}'.repeat(levels)}`;
/** `{"k0":0,"k1":0,…}` with `keys` keys. */
const wideObject = (keys: number) => `{${Array.from({ length: keys }, (_, i) => `"k${i}":0`).join(',')}}`;

const post = (path: string, body: string) => h.http().post(path).set(bearer(key)).set('Content-Type', 'application/json').send(body);
const contextWith = (metadata: string) => post('/v1/context', `{"userId":"u1","task":"Plan","complexity":"low","metadata":${metadata}}`);
const outcomeWith = (metadata: string) =>
  post('/v1/outcome', `{"requestId":"req_${'A'.repeat(60)}","started":true,"metadata":${metadata}}`);

const validationError = (field: string, message: string) => ({
  error: {
    code: 'VALIDATION_ERROR',
    statusCode: 400,
    message: expect.any(String),
    // The exchange's X-Request-Id, as the OpenAPI checks verify for every response.
    traceId: expect.any(String),
    docUrl: '/docs#error-validation_error',
    details: { fields: [{ field, message }] },
  },
});

describe('metadata bounds over HTTP', () => {
  it.each([
    ['context', contextWith],
    ['outcome', outcomeWith],
  ])('refuses metadata nested 10,000 levels deep on %s with 400, not a crash', async (_label, send) => {
    const body = nestedObject(10_000);
    expect(body.length).toBeLessThan(64 * 1024);
    const res = await send(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(validationError('metadata', 'must be nested at most 8 levels deep'));
  });

  it('refuses arrays nested deeper than 8 levels as well', async () => {
    const res = await contextWith(`{"list":${'['.repeat(8)}${']'.repeat(8)}}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(validationError('metadata', 'must be nested at most 8 levels deep'));
  });

  it('accepts metadata nested exactly 8 levels deep', async () => {
    const res = await contextWith(nestedObject(8));
    expect(res.status).toBe(200);
  });

  it.each([
    ['context', contextWith],
    ['outcome', outcomeWith],
  ])('refuses metadata with 5,000 keys (under 64 KiB, over 8 KiB) on %s with 400', async (_label, send) => {
    const body = wideObject(5_000);
    expect(body.length).toBeLessThan(64 * 1024);
    const res = await send(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(validationError('metadata', 'must be at most 8 KiB when serialized'));
  });

  it('answers metadata with 100,000 keys with 413: the body is over 64 KiB', async () => {
    const res = await contextWith(wideObject(100_000));
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', statusCode: 413 });
  });

  it('answers a whole body nested 30,000 arrays deep without a 500', async () => {
    const res = await post('/v1/context', `${'['.repeat(30_000)}${']'.repeat(30_000)}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', statusCode: 400 });
  });

  it('answers deep nesting in a field that expects a string with 400', async () => {
    const res = await post('/v1/context', `{"userId":"u1","task":${nestedObject(10_000)},"complexity":"low"}`);
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual([{ field: 'task', message: 'must be a string' }]);
  });
});

describe('null for an optional field means absent', () => {
  it('on POST /v1/context: taskType and metadata null are answered as if left out', async () => {
    const res = await post(
      '/v1/context',
      JSON.stringify({ userId: 'nulls', task: 'Plan', complexity: 'low', taskType: null, metadata: null }),
    );
    expect(res.status).toBe(200);
  });

  it('on POST /v1/outcome: null signals are absent, so the same outcome without them is a retry, not a conflict', async () => {
    const decided = await post('/v1/context', JSON.stringify({ userId: 'nulls', task: 'Plan', complexity: 'low' }));
    const { requestId } = decided.body as { requestId: string };
    const withNulls = { requestId, started: true, completed: null, timeToStart: null, flowState: null, satisfaction: null, metadata: null };
    const first = await post('/v1/outcome', JSON.stringify(withNulls));
    expect(first.status).toBe(202);
    const retry = await post('/v1/outcome', JSON.stringify({ requestId, started: true }));
    expect(retry.status).toBe(202);
    const conflict = await post('/v1/outcome', JSON.stringify({ requestId, started: true, completed: false }));
    expect(conflict.status).toBe(409);
  });
});
