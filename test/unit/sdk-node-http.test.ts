import { CosClient } from '../../sdk/src';
import { nodeHttpFetch } from '../../sdk/src/node-http';
import { startStubServer, type StubAnswer, type StubServer } from '../support/sdk-stub-server';

/**
 * The SDK's default transport (node:http) and its user-id paths, against a local stub server
 * that records each request target exactly as it arrived.
 */
let stub: StubServer;
beforeAll(async () => {
  stub = await startStubServer((request): StubAnswer => {
    if (request.url === '/no-content') return { status: 204 };
    if (request.url === '/not-modified') return { status: 304, headers: { ETag: '"v1"' } };
    if (request.url === '/reset') return 'reset';
    if (request.url.endsWith('/silent')) return 'hang';
    if (request.method === 'DELETE') return { status: 204 };
    return { status: 200, headers: { 'X-Request-Id': 'stub-id' }, body: { data: [], hasMore: false } };
  });
});
afterAll(() => stub.close());
beforeEach(() => stub.requests.splice(0));

const client = (options: Partial<ConstructorParameters<typeof CosClient>[0]> = {}) =>
  new CosClient({ apiKey: 'cos_sk_test_x', baseUrl: stub.baseUrl, retry: { baseDelay: 5 }, ...options });
const globalFetch = (url: string, init: RequestInit) => fetch(url, init);

/** Every user id with its path segment: percent-encoded, each dot as %2E. */
const IDS: Array<[string, string]> = [
  ['.', '%2E'],
  ['..', '%2E%2E'],
  ['...', '%2E%2E%2E'],
  ['a.b', 'a%2Eb'],
  ['a/b', 'a%2Fb'],
  ['%2E', '%252E'],
  ['50%', '50%25'],
  ['a?b#c', 'a%3Fb%23c'],
  ['ünï', '%C3%BCn%C3%AF'],
];

describe('user ids in paths, through the default transport', () => {
  it.each(IDS)('sends %j as the one segment %s, unchanged, on every profile call', async (userId, segment) => {
    const cos = client();
    await cos.getProfile(userId);
    await cos.updateProfile(userId, { preferredFraming: 'purpose' });
    await cos.listVersions(userId, { limit: 2 });
    await cos.deleteProfile(userId);
    expect(stub.requests.map((request) => `${request.method} ${request.url}`)).toEqual([
      `GET /v1/profile/${segment}`,
      `PUT /v1/profile/${segment}`,
      `GET /v1/profile/${segment}/versions?limit=2`,
      `DELETE /v1/profile/${segment}`,
    ]);
    expect(decodeURIComponent(segment)).toBe(userId);
  });

  it('keeps a base URL path prefix in front of the path', async () => {
    await client({ baseUrl: `${stub.baseUrl}/cos/` }).listVersions('..');
    expect(stub.requests.map((request) => request.url)).toEqual(['/cos/v1/profile/%2E%2E/versions']);
  });
});

describe('user ids in paths, through a fetch', () => {
  it.each(['.', '..'])('refuses %j without sending: fetch would resolve it as a path step and reach another path', async (userId) => {
    const cos = client({ fetch: globalFetch });
    for (const call of [
      () => cos.getProfile(userId),
      () => cos.updateProfile(userId, { preferredFraming: 'purpose' }),
      () => cos.listVersions(userId),
      () => cos.deleteProfile(userId),
    ])
      await expect(call()).rejects.toMatchObject({
        name: 'CosError',
        code: 'INVALID_USER_ID',
        statusCode: 0,
        attempts: 0,
        details: { fields: [{ field: 'userId', message: expect.stringContaining('fetch') }] },
      });
    expect(stub.requests).toEqual([]);
  });

  it('sends every other id as the default transport does', async () => {
    const cos = client({ fetch: globalFetch });
    for (const [userId] of IDS.slice(2)) await cos.listVersions(userId);
    expect(stub.requests.map((request) => request.url)).toEqual(IDS.slice(2).map(([, segment]) => `/v1/profile/${segment}/versions`));
  });

  it('the refused ids are the ones fetch would change', () => {
    expect(new URL('http://x/v1/profile/%2E/versions').pathname).toBe('/v1/profile/versions');
    expect(new URL('http://x/v1/profile/%2E%2E/versions').pathname).toBe('/v1/versions');
    expect(new URL('http://x/v1/profile/%2E%2E%2E/versions').pathname).toBe('/v1/profile/%2E%2E%2E/versions');
  });
});

describe('ids no path can carry, refused either way', () => {
  it.each([
    ['', 'must not be empty'],
    ['\ud800', 'unpaired surrogates'],
  ])('%j', async (userId, reason) => {
    for (const cos of [client(), client({ fetch: globalFetch })])
      await expect(cos.getProfile(userId)).rejects.toMatchObject({
        code: 'INVALID_USER_ID',
        statusCode: 0,
        message: expect.stringContaining(reason),
      });
    expect(stub.requests).toEqual([]);
  });
});

describe('the node:http transport', () => {
  const send = nodeHttpFetch()!;

  it('answers with a WHATWG Response: status, headers, body; none for 204 and 304', async () => {
    const ok = await send(`${stub.baseUrl}/v1/profile/x`, { method: 'GET', headers: { Accept: 'application/json' } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-request-id')).toBe('stub-id');
    expect(await ok.json()).toEqual({ data: [], hasMore: false });
    for (const [path, status] of [
      ['/no-content', 204],
      ['/not-modified', 304],
    ] as const) {
      const empty = await send(`${stub.baseUrl}${path}`, { method: 'GET' });
      expect(empty.status).toBe(status);
      expect(empty.body).toBeNull();
    }
    expect((await send(`${stub.baseUrl}/not-modified`, { method: 'GET' })).headers.get('etag')).toBe('"v1"');
  });

  it('sends the body with its length and the headers given', async () => {
    await send(`${stub.baseUrl}/v1/context`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-A': 'b' },
      body: '{"userId":"ü"}',
    });
    expect(stub.requests[0]).toMatchObject({
      method: 'POST',
      body: '{"userId":"ü"}',
      headers: { 'content-length': '15', 'content-type': 'application/json', 'x-a': 'b' },
    });
  });

  it('keeps the connection alive between calls', async () => {
    const cos = client();
    const before = stub.connections();
    for (let i = 0; i < 3; i++) await cos.getProfile(`kept-${i}`);
    expect(stub.connections() - before).toBeLessThanOrEqual(1);
  });

  it('rejects when the connection is lost before an answer', async () => {
    await expect(send(`${stub.baseUrl}/reset`, { method: 'GET' })).rejects.toMatchObject({ message: expect.any(String) });
  });

  it('times an attempt out, retries it, then throws CosConnectionError with timedOut', async () => {
    const error = await client({ timeout: 100, maxRetries: 1 })
      .getProfile('silent')
      .catch((failure: unknown) => failure);
    expect(error).toMatchObject({ name: 'CosConnectionError', timedOut: true, attempts: 2 });
    expect(stub.requests).toHaveLength(2);
  });

  it("stops at once when the caller aborts, rejecting with the signal's reason", async () => {
    const controller = new AbortController();
    const reason = new Error('caller gave up');
    const call = client().getProfile('silent', { signal: controller.signal });
    while (stub.requests.length === 0) await new Promise<void>((resolve) => setTimeout(resolve, 5));
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
    expect(stub.requests).toHaveLength(1);
  });

  it('refuses a base URL that is not absolute http(s) when the client is made', () => {
    for (const baseUrl of ['localhost:3000', 'ftp://x', '/v1', 'http://'])
      expect(() => new CosClient({ apiKey: 'k', baseUrl })).toThrow(
        expect.objectContaining({ message: expect.stringContaining('baseUrl') }),
      );
  });
});
