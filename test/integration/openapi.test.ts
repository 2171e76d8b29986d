import { buildOpenApiDocument, openApiPath } from '../../api/openapi/document';
import { V1_ROUTES } from '../../api/routes/v1.routes';
import { bearer, startHarness, type Harness } from '../support/harness';
import { expectMatchesOpenApi } from '../support/openapi';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

describe('GET /v1/openapi.json and GET /docs', () => {
  it('serves the OpenAPI document without a key', async () => {
    const res = await h.http().get('/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['x-request-id']).toBeTruthy();
    expect(res.body).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument())));
  });

  it('serves a self-contained HTML reference listing every route, without a key', async () => {
    const res = await h.http().get('/docs');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html; charset=utf-8/);
    for (const route of V1_ROUTES) {
      expect(res.text).toContain(`id="op-`);
      expect(res.text).toContain(
        `<span class="method ${route.method}">${route.method.toUpperCase()}</span> <code>${openApiPath(route.path)}</code>`,
      );
    }
    for (const code of ['USER_NOT_FOUND', 'RATE_LIMIT_EXCEEDED', 'X-Request-Id', 'Retry-After']) expect(res.text).toContain(code);
    // Nothing fetched from elsewhere: no scripts, no external stylesheets, images or fonts.
    expect(res.text).not.toMatch(/<script|<link|src=|url\(|https?:\/\//i);
  });

  it('answers OPTIONS and other methods on both as on every documented path (the checks hold them to the document)', async () => {
    for (const path of ['/v1/openapi.json', '/docs']) {
      const options = await h.http().options(path);
      expect([options.status, options.headers.allow]).toEqual([204, 'GET, HEAD']);
      const post = await h.http().post(path).send({});
      expect([post.status, post.body.error?.code, post.headers.allow]).toEqual([405, 'METHOD_NOT_ALLOWED', 'GET, HEAD']);
      expect((await h.http().head(path)).status).toBe(200);
    }
  });
});

describe('responses to live keys against the document', () => {
  it('matches the document with the rate-limit headers of a live key, on a 200 and on a 403', async () => {
    const live = await h.key('openapi-live', 'live');
    const ok = await h.http().post('/v1/context').set(bearer(live)).send({ userId: 'u1', task: 'Plan', complexity: 'low' });
    expect(ok.status).toBe(200);
    expect(ok.headers['x-ratelimit-limit']).toBeTruthy();
    expectMatchesOpenApi(ok);
    const contextOnly = await h.key('openapi-live', 'live', ['context']);
    const forbidden = await h.http().get('/v1/profile/u1').set(bearer(contextOnly));
    expect(forbidden.status).toBe(403);
    expect(forbidden.headers['x-ratelimit-remaining']).toBeTruthy();
    expectMatchesOpenApi(forbidden);
  });
});
