import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { apiListener, apiUrl, takeMismatches } from '../support/api-responses';
import { openApiMismatches, type Exchange } from '../support/openapi';

/** A stand-in for the API answering /healthz with `body`. */
const answering =
  (body: string, status = 200): RequestListener =>
  (_req, res) => {
    res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': 'trace-1' });
    res.end(body);
  };

const exchange = (overrides: Partial<Exchange>): Exchange => ({
  method: 'GET',
  path: '/healthz',
  status: 200,
  headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'trace-1' },
  text: '{"status":"ok"}',
  ...overrides,
});

let server: Server | undefined;
afterEach(() => new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined))));

describe('the checks of every response of the API against its OpenAPI document', () => {
  it('find a body the document does not describe, received through supertest', async () => {
    expect((await request(apiListener(answering('{"status":"fine"}'))).get('/healthz')).status).toBe(200);
    expect(await takeMismatches()).toEqual(['GET /healthz → 200: body /status must be equal to constant {"allowedValue":"ok"}']);
  });

  it('find one received through fetch, the body read from a clone', async () => {
    server = createServer(answering('{"status":"ok","extra":1}')).listen(0, '127.0.0.1');
    await new Promise((resolve) => server!.once('listening', resolve));
    const url = apiUrl(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const res = await fetch(`${url}/healthz`);
    expect(await res.json()).toEqual({ status: 'ok', extra: 1 });
    expect(await takeMismatches()).toEqual([
      expect.stringMatching(/^GET \/healthz → 200: body \(root\) must NOT have additional properties/),
    ]);
  });

  it('leave alone what is not the API (a dashboard, a worker)', async () => {
    await request(answering('{"status":"fine"}')).get('/healthz');
    expect(await takeMismatches()).toEqual([]);
  });

  it("hold an error's traceId to the response's X-Request-Id", () => {
    const error = { code: 'NOT_FOUND', message: 'No route', statusCode: 404, traceId: 'trace-2', docUrl: '/docs#error-not_found' };
    const notFound = exchange({ path: '/nowhere', status: 404, text: JSON.stringify({ error }) });
    expect(openApiMismatches(notFound)).toEqual(['GET /nowhere → 404: error.traceId trace-2 is not the X-Request-Id trace-1']);
    expect(openApiMismatches({ ...notFound, text: JSON.stringify({ error: { ...error, traceId: 'trace-1' } }) })).toEqual([]);
  });

  it('read HEAD as GET without a body, OPTIONS as the allowed methods, another method as a 405', () => {
    expect(openApiMismatches(exchange({ method: 'HEAD', text: '' }))).toEqual([]);
    expect(openApiMismatches(exchange({ method: 'HEAD' }))).toEqual(['HEAD /healthz → 200: undocumented body {"status":"ok"}']);
    const options = exchange({ method: 'OPTIONS', status: 204, text: '', headers: { 'x-request-id': 'trace-1', allow: 'GET, HEAD' } });
    expect(openApiMismatches(options)).toEqual([]);
    const error = {
      code: 'METHOD_NOT_ALLOWED',
      message: 'No',
      statusCode: 405,
      traceId: 'trace-1',
      docUrl: '/docs#error-method_not_allowed',
    };
    const refused = { method: 'POST', status: 405, text: JSON.stringify({ error }) };
    expect(openApiMismatches(exchange({ ...refused, headers: { ...exchange({}).headers, allow: 'GET, HEAD' } }))).toEqual([]);
    expect(openApiMismatches(exchange({ method: 'POST', status: 200 }))).toEqual(['POST /healthz → 200: post /healthz: no such operation']);
  });

  it('find a documented header missing, and one the response should not carry', () => {
    expect(openApiMismatches(exchange({ headers: { 'content-type': 'application/json' } }))).toEqual([
      'GET /healthz → 200: header X-Request-Id missing',
    ]);
    expect(openApiMismatches(exchange({ headers: { ...exchange({}).headers, 'retry-after': '1' } }))).toEqual([
      'GET /healthz → 200: header retry-after is not documented for this response',
    ]);
  });
});
