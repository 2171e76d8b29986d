import request from 'supertest';
import type { ContextService } from '../../api/services/context.service';
import { bearer, startHarness, type Harness } from '../support/harness';
import { expectMatchesOpenApi } from '../support/openapi';

let h: Harness;
let key: string;
beforeAll(async () => {
  h = await startHarness();
  key = await h.key('protocol', 'test');
});
afterAll(() => h.close());

const errorShape = (code: string, statusCode: number) => ({
  error: expect.objectContaining({ code, statusCode, message: expect.any(String) }),
});

describe('HTTP protocol and error envelope', () => {
  it('answers an unknown route with 404 NOT_FOUND before checking auth', async () => {
    const res = await h.http().get('/v1/nothing-here');
    expect(res.status).toBe(404);
    expectMatchesOpenApi(res);
    expect(res.body).toEqual(errorShape('NOT_FOUND', 404));
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  it('answers a known route with the wrong method with 405 METHOD_NOT_ALLOWED and an Allow header, before auth', async () => {
    const res = await h.http().get('/v1/context');
    expect(res.status).toBe(405);
    expectMatchesOpenApi(res);
    expect(res.body).toEqual(errorShape('METHOD_NOT_ALLOWED', 405));
    expect(res.headers.allow).toBe('POST');
    const patch = await h.http().patch('/v1/profile/u1').set(bearer(key));
    expect(patch.status).toBe(405);
    expectMatchesOpenApi(patch);
    expect(patch.headers.allow).toContain('PUT');
  });

  it('answers a static path with a query string as the path itself', async () => {
    // POST /v1/context and /v1/outcome are looked up by exact path ahead of the router; a query
    // string must still reach the same route (other spellings are unknown paths, below).
    const body = { userId: 'spelling', task: 'T', complexity: 'low' };
    const canonical = await h.http().post('/v1/context').set(bearer(key)).send(body);
    expectMatchesOpenApi(canonical);
    for (const path of ['/v1/context?source=app', '/v1/context?']) {
      const res = await h.http().post(path).set(bearer(key)).send(body);
      expect({ path, status: res.status, fields: Object.keys(res.body) }).toEqual({
        path,
        status: 200,
        fields: Object.keys(canonical.body),
      });
    }
    const unauthorized = await h.http().post('/v1/context?source=app').send(body);
    expect(unauthorized.status).toBe(401);
    const options = await h.http().options('/v1/outcome');
    expect(options.status).toBe(204);
    expect(options.headers.allow).toBe('POST');
    const invalid = await h.http().post('/v1/outcome?x=1').set(bearer(key)).send({ requestId: 'nope', started: true });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual(errorShape('INVALID_REQUEST_ID', 400));
  });

  it('answers a body over 64 KiB with 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await h
      .http()
      .post('/v1/context')
      .set(bearer(key))
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ userId: 'u', task: 'x'.repeat(70 * 1024), complexity: 'low' }));
    expect(res.status).toBe(413);
    expectMatchesOpenApi(res);
    expect(res.body).toEqual(errorShape('PAYLOAD_TOO_LARGE', 413));
  });

  it('answers a non-JSON body with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const res = await h.http().post('/v1/context').set(bearer(key)).set('Content-Type', 'text/plain').send('hello');
    expect(res.status).toBe(415);
    expectMatchesOpenApi(res);
    expect(res.body).toEqual(errorShape('UNSUPPORTED_MEDIA_TYPE', 415));
    const form = await h.http().put('/v1/profile/u1').set(bearer(key)).type('form').send({ preferredFraming: 'purpose' });
    expect(form.status).toBe(415);
    expectMatchesOpenApi(form);
  });

  it('answers malformed JSON with 400 INVALID_JSON', async () => {
    const res = await h.http().post('/v1/context').set(bearer(key)).set('Content-Type', 'application/json').send('{"userId": ');
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorShape('INVALID_JSON', 400));
    expectMatchesOpenApi(res);
  });

  it('treats a JSON body that is not an object as a validation error', async () => {
    const res = await h.http().post('/v1/context').set(bearer(key)).set('Content-Type', 'application/json').send('[1,2]');
    expect(res.status).toBe(400);
    expectMatchesOpenApi(res);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('takes JSON in UTF-8 only: another charset is 415, whatever the body holds; utf-8 and utf8 in any case are UTF-8', async () => {
    const body = JSON.stringify({ userId: 'u', task: 't', complexity: 'low' });
    const send = (type: string, raw: Buffer | string) => h.http().post('/v1/context').set(bearer(key)).set('Content-Type', type).send(raw);
    for (const [type, raw] of [
      ['application/json; charset=utf-16le', Buffer.from(body, 'utf16le')],
      ['application/json; charset=utf-32', body],
      ['application/json; charset=latin1', body],
      // Named twice: every charset named must be UTF-8, in either order.
      ['application/json; charset=utf-8; charset=latin1', body],
      ['application/json; charset=latin1; charset=utf-8', body],
    ] as const) {
      const res = await send(type, raw);
      expect(res.status).toBe(415);
      expect(res.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
      expectMatchesOpenApi(res);
    }
    for (const type of ['application/json; charset=UTF8', 'application/json;charset="Utf-8"', 'application/json']) {
      expect((await send(type, body)).status).toBe(200);
    }
  });

  it('has one path per operation: a trailing slash or another case is an unknown path (404)', async () => {
    const answers = await Promise.all([
      h.http().post('/v1/context/').set(bearer(key)).send({ userId: 'u', task: 't', complexity: 'low' }),
      h.http().post('/V1/CONTEXT').set(bearer(key)).send({ userId: 'u', task: 't', complexity: 'low' }),
      h.http().get('/v1/profile/u/').set(bearer(key)),
      h.http().get('/v1/Profile/u').set(bearer(key)),
      h.http().get('/healthz/'),
      h.http().get('/READYZ'),
    ]);
    for (const res of answers) {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    expect((await h.http().get('/healthz')).status).toBe(200);
  });

  it('accepts application/json with a charset and echoes a client X-Request-Id', async () => {
    const res = await h
      .http()
      .post('/v1/context')
      .set(bearer(key))
      .set('X-Request-Id', 'client-abc.123')
      .set('Content-Type', 'application/json; charset=utf-8')
      .send(JSON.stringify({ userId: 'u', task: 't', complexity: 'low' }));
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toBe('client-abc.123');
    expectMatchesOpenApi(res);
  });

  it('replaces an unsafe client X-Request-Id with its own', async () => {
    const res = await h.http().get('/v1/profile/u').set(bearer(key)).set('X-Request-Id', 'bad id with spaces');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expectMatchesOpenApi(res);
  });

  it('answers an unexpected failure with 500 INTERNAL_ERROR in the envelope, without its message or stack trace', async () => {
    // The context service fails as a bug would, inside the app the harness built.
    const failing = Object.assign(Object.create(h.deps.context) as ContextService, {
      decide: async () => {
        throw new TypeError("Cannot read properties of undefined (reading 'framing')");
      },
    });
    const res = await request(h.appWith({ context: failing }))
      .post('/v1/context')
      .set(bearer(key))
      .send({ userId: 'u', task: 't', complexity: 'low' });
    expect(res.status).toBe(500);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['x-request-id']).toBeTruthy();
    expect(res.body).toEqual({
      error: {
        code: 'INTERNAL_ERROR',
        statusCode: 500,
        message: expect.any(String),
        traceId: res.headers['x-request-id'],
        docUrl: '/docs#error-internal_error',
      },
    });
    expect(res.text).not.toMatch(/at .*\.(ts|js):\d+/);
    expect(res.text).not.toMatch(/TypeError|framing/);
  });

  it('answers OPTIONS with 204 and the Allow header, and 401s with WWW-Authenticate', async () => {
    const options = await h.http().options('/v1/profile/u1');
    expect(options.status).toBe(204);
    expect(options.headers.allow).toBe('GET, PUT, DELETE, HEAD');
    const unauthorized = await h.http().get('/v1/profile/u1');
    expect(unauthorized.headers['www-authenticate']).toBe('Bearer realm="cos"');
    expectMatchesOpenApi(unauthorized);
  });

  it('answers a path userId that is not valid percent-encoding with 400 INVALID_USER_ID, not 500', async () => {
    for (const path of ['/v1/profile/%ZZ', '/v1/profile/%FF', '/v1/profile/%ED%A0%80/versions']) {
      const res = await h.http().get(path).set(bearer(key));
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('INVALID_USER_ID');
      expectMatchesOpenApi(res);
    }
  });

  it('answers a body whose Content-Encoding does not decode with 400 INVALID_JSON, not 500', async () => {
    const res = await h
      .http()
      .post('/v1/context')
      .set(bearer(key))
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'gzip')
      .send('{}');
    expect(res.status).toBe(400);
    expectMatchesOpenApi(res);
    expect(res.body.error.code).toBe('INVALID_JSON');
  });

  it('answers a body that is not valid UTF-8 with 400 INVALID_JSON', async () => {
    const body = Buffer.concat([Buffer.from('{"userId":"'), Buffer.from([0xff, 0xfe]), Buffer.from('","task":"t","complexity":"low"}')]);
    const res = await h
      .http()
      .post('/v1/context')
      .set(bearer(key))
      .set('Content-Type', 'application/json')
      .serialize(() => body as never)
      .send(body as never);
    expect(res.status).toBe(400);
    expectMatchesOpenApi(res);
    expect(res.body.error.code).toBe('INVALID_JSON');
  });

  it('refuses text Postgres cannot store (NUL, unpaired surrogates) instead of accepting what can never be applied', async () => {
    const post = (body: string) => h.http().post('/v1/context').set(bearer(key)).set('Content-Type', 'application/json').send(body);
    expect((await post('{"userId":"\\ud800","task":"t","complexity":"low"}')).body.error.code).toBe('INVALID_USER_ID');
    expect((await post('{"userId":"u","task":"a\\u0000b","complexity":"low"}')).body.error.code).toBe('VALIDATION_ERROR');
    const metadata = await post('{"userId":"u","task":"t","complexity":"low","metadata":{"x":"a\\u0000b"}}');
    expect(metadata.status).toBe(400);
    expectMatchesOpenApi(metadata);
    expect(metadata.body.error.details.fields[0].field).toBe('metadata');
    const key2 = await post('{"userId":"u","task":"t","complexity":"low","metadata":{"\\udfff":1}}');
    expect(key2.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('reports readiness of Redis and Postgres without auth', async () => {
    const res = await h.http().get('/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', checks: { redis: 'ok', postgres: 'ok' } });
  });
});
