import { CosClient, type CosClientOptions, type ResponseInfo, type RetryInfo } from '../../sdk/src';
import { startStubServer, type StubAnswer, type StubRequest, type StubServer } from '../support/sdk-stub-server';

/**
 * Idempotency keys and the per-call options, against a local stub server that plays the
 * service's side of the Idempotency-Key contract: replays (`Idempotent-Replayed: true`), a key
 * still in use (409 IDEMPOTENCY_KEY_IN_USE, Retry-After) and a key reused with another body
 * (409 IDEMPOTENCY_KEY_REUSED).
 */
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const DECISION = {
  requestId: 'req_1',
  suggestedFraming: 'purpose',
  communicationStyle: 'warm',
  complexity: 'chunked',
  encouragement: 'moderate',
  confidence: 0.5,
  rationale: 'r',
  metadata: { profilePhase: 'cold_start', interactionCount: 0, explorationMode: true },
};
const ACCEPTED = { success: true, message: 'Outcome accepted' };
const error = (status: number, code: string, headers: Record<string, string> = {}, extra: object = {}): StubAnswer => ({
  status,
  headers,
  body: { error: { code, message: `${code} message`, statusCode: status, ...extra } },
});

let script: (request: StubRequest, n: number) => StubAnswer;
let stub: StubServer;
beforeAll(async () => {
  stub = await startStubServer((request, n) => script(request, n));
});
afterAll(() => stub.close());
beforeEach(() => {
  stub.requests.splice(0);
  script = (request) => (request.url === '/v1/outcome' ? { status: 202, body: ACCEPTED } : { status: 200, body: DECISION });
});

const header = (request: StubRequest | undefined, name: string) => request?.headers[name.toLowerCase()];
const keysSent = () => stub.requests.map((request) => header(request, 'idempotency-key'));
function client(options: Partial<CosClientOptions> = {}) {
  const responses: ResponseInfo[] = [];
  const retries: RetryInfo[] = [];
  const cos = new CosClient({
    apiKey: 'cos_sk_test_x',
    baseUrl: stub.baseUrl,
    retry: { baseDelay: 5, maxDelay: 20 },
    onResponse: (info) => responses.push(info),
    onRetry: (info) => retries.push(info),
    ...options,
  });
  return { cos, responses, retries };
}
const context = (cos: CosClient, options = {}) => cos.context({ userId: 'u', task: 'Plan', complexity: 'low' }, options);

describe('Idempotency-Key', () => {
  it('is a new random UUID v4 for every POST call, context and outcome', async () => {
    const { cos } = client();
    await context(cos);
    await context(cos);
    await cos.outcome({ requestId: 'req_1', started: true });
    const keys = keysSent();
    expect(keys).toHaveLength(3);
    keys.forEach((key) => expect(key).toMatch(UUID_V4));
    expect(new Set(keys).size).toBe(3);
  });

  it('is the same on every retry of one call: 503s, a lost connection, then the answer', async () => {
    script = (_request, n) => (n === 1 ? error(503, 'SERVICE_UNAVAILABLE') : n === 2 ? 'reset' : { status: 202, body: ACCEPTED });
    const { cos, retries } = client();
    const body = { requestId: 'req_1', started: true, satisfaction: 0.5 };
    await expect(cos.outcome(body)).resolves.toEqual(ACCEPTED);
    expect(stub.requests).toHaveLength(3);
    expect(new Set(keysSent()).size).toBe(1);
    expect(keysSent()[0]).toMatch(UUID_V4);
    // The same bytes under the key on every attempt, and the same X-Request-Id.
    expect(new Set(stub.requests.map((request) => request.body)).size).toBe(1);
    expect(new Set(stub.requests.map((request) => header(request, 'x-request-id'))).size).toBe(1);
    expect(retries.map((retry) => retry.error)).toEqual([
      expect.objectContaining({ code: 'SERVICE_UNAVAILABLE', idempotencyKey: keysSent()[0] }),
      expect.objectContaining({ name: 'CosConnectionError', idempotencyKey: keysSent()[0] }),
    ]);
  });

  it('sends the same bytes on a retry even when the caller changes the request meanwhile', async () => {
    script = (_request, n) => (n === 1 ? error(503, 'SERVICE_UNAVAILABLE') : { status: 202, body: ACCEPTED });
    const body = { requestId: 'req_1', started: true, satisfaction: 0.5 };
    const { cos } = client({ onRetry: () => (body.satisfaction = 0.9) });
    await cos.outcome(body);
    expect(stub.requests.map((request) => JSON.parse(request.body).satisfaction)).toEqual([0.5, 0.5]);
  });

  it('is the one given per call, on every attempt', async () => {
    script = (_request, n) => (n === 1 ? error(503, 'SERVICE_UNAVAILABLE') : { status: 200, body: DECISION });
    const { cos } = client();
    await context(cos, { idempotencyKey: 'order-42:context' });
    expect(keysSent()).toEqual(['order-42:context', 'order-42:context']);
  });

  it('is not sent by GET, PUT or DELETE, which are idempotent by themselves', async () => {
    script = (request) => (request.method === 'DELETE' ? { status: 204 } : { status: 200, body: { data: [], hasMore: false } });
    const { cos } = client();
    await cos.getProfile('u', { idempotencyKey: 'k' });
    await cos.updateProfile('u', { preferredFraming: 'purpose' });
    await cos.listVersions('u');
    await cos.deleteProfile('u');
    expect(keysSent()).toEqual([undefined, undefined, undefined, undefined]);
  });

  it('reports a replayed answer (Idempotent-Replayed: true) in onResponse', async () => {
    const replay: Record<string, string> = { 'Idempotent-Replayed': 'true' };
    script = (_request, n) => ({ status: 200, headers: n === 2 ? replay : {}, body: DECISION });
    const { cos, responses } = client();
    await context(cos, { idempotencyKey: 'same' });
    await context(cos, { idempotencyKey: 'same' });
    expect(responses.map((info) => [info.replayed, info.idempotencyKey])).toEqual([
      [false, 'same'],
      [true, 'same'],
    ]);
  });

  it('retries 409 IDEMPOTENCY_KEY_IN_USE with the same key, never sooner than its Retry-After, jittered', async () => {
    script = (_request, n) => (n === 1 ? error(409, 'IDEMPOTENCY_KEY_IN_USE', { 'Retry-After': '1' }) : { status: 200, body: DECISION });
    const { cos, retries, responses } = client({ retry: { baseDelay: 200 } });
    const started = Date.now();
    await expect(context(cos)).resolves.toEqual(DECISION);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(stub.requests).toHaveLength(2);
    expect(new Set(keysSent()).size).toBe(1);
    expect(retries).toHaveLength(1);
    expect(retries[0]!.error).toMatchObject({ code: 'IDEMPOTENCY_KEY_IN_USE', statusCode: 409, retryAfter: 1 });
    expect(retries[0]!.delay).toBeGreaterThanOrEqual(1000);
    expect(retries[0]!.delay).toBeLessThan(1200);
    expect(responses.map((info) => info.statusCode)).toEqual([409, 200]);
  });

  it('retries IDEMPOTENCY_KEY_IN_USE without Retry-After on the backoff, and gives up at the budget', async () => {
    script = () => error(409, 'IDEMPOTENCY_KEY_IN_USE');
    const { cos } = client({ retry: { baseDelay: 20, maxDelay: 20, budget: 150 } });
    const failure = await context(cos).catch((thrown: unknown) => thrown);
    expect(failure).toMatchObject({ name: 'CosError', code: 'IDEMPOTENCY_KEY_IN_USE', statusCode: 409 });
    expect(stub.requests.length).toBeGreaterThan(2);
    expect(new Set(keysSent()).size).toBe(1);
  });

  it('never retries 409 IDEMPOTENCY_KEY_REUSED, and hands back the key', async () => {
    script = () => error(409, 'IDEMPOTENCY_KEY_REUSED');
    const { cos, retries } = client();
    const failure = await context(cos, { idempotencyKey: 'used-elsewhere' }).catch((thrown: unknown) => thrown);
    expect(failure).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', statusCode: 409, attempts: 1, idempotencyKey: 'used-elsewhere' });
    expect(stub.requests).toHaveLength(1);
    expect(retries).toEqual([]);
  });

  it('refuses a key no header can carry, without sending', async () => {
    const { cos } = client();
    for (const idempotencyKey of ['', 'two words', 'ключ', 'a\r\nX-Evil: 1'])
      await expect(context(cos, { idempotencyKey })).rejects.toMatchObject({
        name: 'TypeError',
        message: expect.stringContaining('idempotencyKey'),
      });
    expect(stub.requests).toEqual([]);
  });
});

describe('requestId', () => {
  it('is sent as X-Request-Id with every attempt instead of a generated one', async () => {
    script = (_request, n) => (n === 1 ? 'reset' : { status: 200, body: DECISION });
    const { cos } = client();
    await context(cos, { requestId: 'trace.abc-1_2' });
    expect(stub.requests.map((request) => header(request, 'x-request-id'))).toEqual(['trace.abc-1_2', 'trace.abc-1_2']);
  });

  it('is a UUID per call by default', async () => {
    const { cos } = client();
    await cos.getProfile('u');
    await cos.getProfile('u');
    const ids = stub.requests.map((request) => header(request, 'x-request-id'));
    ids.forEach((id) => expect(id).toMatch(UUID_V4));
    expect(ids[0]).not.toBe(ids[1]);
  });

  it('refuses one the service would replace (1–128 of [A-Za-z0-9._-]), without sending', async () => {
    const { cos } = client();
    for (const requestId of ['', 'has space', 'x'.repeat(129), 'ü'])
      await expect(cos.getProfile('u', { requestId })).rejects.toMatchObject({
        name: 'TypeError',
        message: expect.stringContaining('requestId'),
      });
    expect(stub.requests).toEqual([]);
  });
});

describe('headers', () => {
  it('adds the headers given to every attempt', async () => {
    script = (_request, n) => (n === 1 ? error(503, 'SERVICE_UNAVAILABLE') : { status: 200, body: DECISION });
    const { cos } = client();
    await context(cos, { headers: { 'X-Tenant-Trace': 't-1', Baggage: 'k=v' } });
    expect(stub.requests.map((request) => [header(request, 'x-tenant-trace'), header(request, 'baggage')])).toEqual([
      ['t-1', 'k=v'],
      ['t-1', 'k=v'],
    ]);
  });

  it.each(['Authorization', 'content-type', 'X-Request-Id', 'Idempotency-Key', 'User-Agent', 'Accept', 'Host', 'Content-Length'])(
    'refuses %s, which the client sets itself, without sending',
    async (name) => {
      const { cos } = client();
      await expect(context(cos, { headers: { [name]: 'x' } })).rejects.toMatchObject({
        name: 'TypeError',
        message: expect.stringContaining(`${name} is set by the client`),
      });
      expect(stub.requests).toEqual([]);
    },
  );

  it('refuses a header no request can carry, without sending, instead of retrying it as an outage', async () => {
    const { cos } = client();
    await expect(cos.getProfile('u', { headers: { 'X-A': 'line\nbreak' } })).rejects.toMatchObject({ name: 'TypeError' });
    await expect(cos.getProfile('u', { headers: { 'Bad Name': 'x' } })).rejects.toMatchObject({ name: 'TypeError' });
    expect(stub.requests).toEqual([]);
  });
});

describe('error bodies', () => {
  it('give CosError its traceId and docUrl; traceId is the X-Request-Id without them', async () => {
    const docUrl = 'https://cos.example.com/docs#USER_NOT_FOUND';
    script = (_request, n) =>
      n === 1
        ? error(404, 'USER_NOT_FOUND', { 'X-Request-Id': 'answer-1' }, { traceId: 'answer-1', docUrl })
        : error(404, 'USER_NOT_FOUND', { 'X-Request-Id': 'answer-2' });
    const { cos } = client();
    await expect(cos.getProfile('u')).rejects.toMatchObject({ traceId: 'answer-1', docUrl, requestId: 'answer-1' });
    const bare = await cos.getProfile('u').catch((thrown: unknown) => thrown);
    expect(bare).toMatchObject({ traceId: 'answer-2', docUrl: undefined });
  });
});

describe('client options given as undefined', () => {
  it('keep their defaults', async () => {
    script = (_request, n) => (n === 1 ? error(503, 'SERVICE_UNAVAILABLE') : { status: 200, body: DECISION });
    const { cos, retries } = client({ timeout: undefined, maxRetries: undefined, retry: { baseDelay: undefined, budget: undefined } });
    await context(cos, { timeout: undefined, maxRetries: undefined, signal: undefined, idempotencyKey: undefined, requestId: undefined });
    expect(retries).toHaveLength(1);
    // The default backoff: up to 500 ms before the first retry.
    expect(retries[0]!.delay).toBeGreaterThanOrEqual(0);
    expect(retries[0]!.delay).toBeLessThan(500);
  });
});
