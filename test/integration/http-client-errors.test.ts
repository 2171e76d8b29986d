import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { ERROR_SCHEMAS } from '../../api/schemas/response.schemas';
import type { ErrorCode } from '../../shared/errors/app-error';
import { answerClientErrors, HTTP_SERVER_LIMITS, serverOptions, type HttpServerLimits } from '../../shared/http/client-errors';
import { createLogger } from '../../shared/logger/logger';
import { spawnDashboard } from '../support/dashboard';
import { eventually } from '../support/harness';
import { spawnApi, stop, type Spawned } from '../support/processes';
import { createTestEnv, type TestEnv } from '../support/test-env';

/**
 * What Node's HTTP parser and its time-outs reject never reaches the apps: these suites speak raw
 * TCP to the built API and dashboard (their real servers and limits), and to a server made with
 * the same module and short limits (slow clients in seconds, not the real time-outs).
 */

/** Short limits for the slow-client cases, so they take seconds. */
const SHORT: HttpServerLimits = { headersTimeoutMs: 2_000, requestTimeoutMs: 4_000, checkIntervalMs: 250 };
/** How late past its time-out a close may come: the check interval, and a busy machine. */
const SLACK_MS = 3_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** The short server's path that is answered before its body is read. */
const ANSWERS_AT_ONCE = '/answers-at-once';

let env: TestEnv;
let api: Spawned & { url: string };
let dashboard: Spawned & { url: string };
let short: Server;
let shortUrl: string;
const shortLog: string[] = [];

beforeAll(async () => {
  env = await createTestEnv();
  [api, dashboard] = await Promise.all([spawnApi(env.processEnv()), spawnDashboard(env.processEnv())]);
  const logger = createLogger('info', 'test', { write: (line: string) => void shortLog.push(line) });
  // It answers once the whole body is in: only the time-outs can end a slow request. Except on
  // ANSWERS_AT_ONCE, which answers before reading the body, as the API's 401 does.
  const drainThenAnswer = (req: IncomingMessage, res: ServerResponse) => {
    if (req.url === ANSWERS_AT_ONCE) return void res.writeHead(401, { 'Content-Length': 2 }).end('{}');
    req.resume().on('end', () => res.end());
  };
  short = answerClientErrors(createServer(serverOptions(SHORT), drainThenAnswer), logger).listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => short.once('listening', resolve).once('error', reject));
  shortUrl = `http://127.0.0.1:${(short.address() as AddressInfo).port}`;
});
afterAll(async () => {
  if (short) {
    short.closeAllConnections();
    await new Promise((resolve) => short.close(resolve));
  }
  await Promise.all([api && stop(api), dashboard && stop(dashboard)]);
  await env?.close();
});

/** A raw connection: what it received, and when it closed (ms after it was opened). */
interface Connection {
  socket: Socket;
  received: () => string;
  closedAfterMs: () => number | undefined;
}

function open(url: string): Connection {
  const { hostname, port } = new URL(url);
  const startedAt = Date.now();
  let closedAt: number | undefined;
  const chunks: Buffer[] = [];
  const socket = connect(Number(port), hostname);
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  // A server that closes while the client still writes resets it: what arrived before still counts.
  socket.on('error', () => undefined);
  socket.on('close', () => (closedAt = Date.now()));
  return { socket, received: () => Buffer.concat(chunks).toString('utf8'), closedAfterMs: () => closedAt && closedAt - startedAt };
}

/** Writes `text` one byte a second, as a slow (or malicious) client does, until the connection closes. */
function trickle(connection: Connection, text: string): void {
  let next = 0;
  const timer = setInterval(() => {
    if (connection.socket.destroyed || next >= text.length) return void clearInterval(timer);
    connection.socket.write(text[next++]!);
  }, 1_000);
  connection.socket.on('close', () => clearInterval(timer));
}

/** Polls until the server has closed the connection; fails after `withinMs`. Resolves with when it closed. */
async function closedWithin(connection: Connection, withinMs: number): Promise<number> {
  const closed = await eventually(
    async () => connection.closedAfterMs() !== undefined && { ms: connection.closedAfterMs()! },
    withinMs,
    50,
  );
  return closed.ms;
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** The one response the server wrote before closing. */
function answerOf(connection: Connection): Answer {
  const text = connection.received();
  const end = text.indexOf('\r\n\r\n');
  expect(end).toBeGreaterThan(0);
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  const rawBody = text.slice(end + 4);
  expect(Buffer.byteLength(rawBody)).toBe(Number(headers['content-length']));
  return { status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine!)?.[1]), headers, body: JSON.parse(rawBody) };
}

/** The answer is the contract's error envelope for `code` (exactly: no field more), with an X-Request-Id, closing the connection. */
function expectContractError(answer: Answer, code: ErrorCode, status: number): void {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(answer.headers.connection).toBe('close');
  expect(answer.headers['x-request-id']).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
  expect(answer.body).toEqual({
    error: expect.objectContaining({
      code,
      statusCode: status,
      message: expect.any(String),
      traceId: answer.headers['x-request-id'],
      docUrl: `/docs#error-${code.toLowerCase()}`,
    }),
  });
  expect(ERROR_SCHEMAS[code].parse(answer.body)).toEqual(answer.body);
}

const servers = [
  ['API', () => api.url],
  ['dashboard', () => dashboard.url],
] as const;

describe.each(servers)('the %s server answers what its HTTP parser rejects in the error envelope', (_name, url) => {
  it('an unknown method: 400 VALIDATION_ERROR on the field "(request)", a new request id, and the connection closed', async () => {
    const connection = open(url());
    connection.socket.write('FOO / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await closedWithin(connection, SLACK_MS);
    const answer = answerOf(connection);
    expectContractError(answer, 'VALIDATION_ERROR', 400);
    expect(answer.body).toEqual({
      error: expect.objectContaining({ details: { fields: [{ field: '(request)', message: 'must be a well-formed HTTP/1.1 request' }] } }),
    });
    expect(answer.headers['x-request-id']).toMatch(UUID);
  });

  it('headers over 16 KiB: 431 HEADERS_TOO_LARGE with the limit, and the connection closed', async () => {
    const connection = open(url());
    connection.socket.write(`GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Padding: ${'a'.repeat(20 * 1024)}\r\n\r\n`);
    await closedWithin(connection, SLACK_MS);
    const answer = answerOf(connection);
    expectContractError(answer, 'HEADERS_TOO_LARGE', 431);
    expect(answer.body).toEqual({ error: expect.objectContaining({ details: { limit: 16_384 } }) });
  });

  it('an HTTP/1.1 request without Host: 400 VALIDATION_ERROR on "(request)", and the connection closed', async () => {
    const connection = open(url());
    connection.socket.write('GET /healthz HTTP/1.1\r\n\r\n');
    await closedWithin(connection, SLACK_MS);
    const answer = answerOf(connection);
    expectContractError(answer, 'VALIDATION_ERROR', 400);
    expect(answer.body).toEqual({
      error: expect.objectContaining({ details: { fields: [{ field: '(request)', message: 'must be a well-formed HTTP/1.1 request' }] } }),
    });
  });

  it('a CONNECT to a proxy target: 404 NOT_FOUND, and the connection closed', async () => {
    const connection = open(url());
    connection.socket.write('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    await closedWithin(connection, SLACK_MS);
    expectContractError(answerOf(connection), 'NOT_FOUND', 404);
  });

  it('a request still fine after those: the parser errors closed only their own connections', async () => {
    expect((await fetch(`${url()}/healthz`)).status).toBe(200);
  });
});

describe('what Node would answer on its own reaches the API', () => {
  it('CONNECT on a known path: 405 METHOD_NOT_ALLOWED with Allow, and the connection closed', async () => {
    const connection = open(api.url);
    connection.socket.write('CONNECT /v1/context HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await closedWithin(connection, SLACK_MS);
    const answer = answerOf(connection);
    expectContractError(answer, 'METHOD_NOT_ALLOWED', 405);
    expect(answer.headers.allow).toBe('POST');
  });

  it('an Expect other than 100-continue is ignored: the request is served', async () => {
    const connection = open(api.url);
    connection.socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\nExpect: foo\r\nConnection: close\r\n\r\n');
    await closedWithin(connection, SLACK_MS);
    expect(connection.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n(?:[^\r\n]*\r\n)*X-Request-Id: [0-9a-f-]{36}\r\n/);
  });
});

describe('slow clients', () => {
  const slowHeaders = 'GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: ' + 'b'.repeat(200);

  it(
    'are answered 408 REQUEST_TIMEOUT and freed by the built API and dashboard within their headers time-out',
    async () => {
      const connections = [open(api.url), open(dashboard.url)];
      for (const connection of connections) trickle(connection, slowHeaders);
      const within = HTTP_SERVER_LIMITS.headersTimeoutMs + HTTP_SERVER_LIMITS.checkIntervalMs + SLACK_MS;
      const closedAfter = await Promise.all(connections.map((connection) => closedWithin(connection, within)));
      // Time-outs of Node's own defaults (60 s, checked every 30 s) would have held them at least 30 s.
      for (const ms of closedAfter) expect(ms).toBeLessThan(30_000);
      for (const connection of connections) expectContractError(answerOf(connection), 'REQUEST_TIMEOUT', 408);
    },
    HTTP_SERVER_LIMITS.headersTimeoutMs + 30_000,
  );

  it('headers a byte a second: 408 REQUEST_TIMEOUT within the headers time-out, logged under the answer’s request id', async () => {
    const connection = open(shortUrl);
    trickle(connection, slowHeaders);
    await closedWithin(connection, SHORT.headersTimeoutMs + SHORT.checkIntervalMs + SLACK_MS);
    const answer = answerOf(connection);
    expectContractError(answer, 'REQUEST_TIMEOUT', 408);
    const id = answer.headers['x-request-id']!;
    expect(id).toMatch(UUID);
    const logged = shortLog.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.reqId === id);
    expect(logged).toEqual([expect.objectContaining({ msg: 'client error', status: 408, code: 'ERR_HTTP_REQUEST_TIMEOUT' })]);
  });

  it('a request answered before its body came: its body never completing closes the connection, nothing more is written', async () => {
    const connection = open(shortUrl);
    connection.socket.write(`POST ${ANSWERS_AT_ONCE} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n{"u`);
    const closedAfter = await closedWithin(connection, SHORT.requestTimeoutMs + SHORT.checkIntervalMs + SLACK_MS);
    expect(closedAfter).toBeGreaterThanOrEqual(SHORT.headersTimeoutMs);
    // One answer, the app's, and no 408 after it on the same connection.
    expect(connection.received()).toMatch(/^HTTP\/1\.1 401 Unauthorized\r\n[\s\S]*\r\n\r\n\{\}$/);
  });

  it('a body a byte a second: 408 REQUEST_TIMEOUT within the request time-out', async () => {
    const connection = open(shortUrl);
    connection.socket.write(
      'POST /v1/context HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n',
    );
    trickle(connection, `{"userId":"slow","task":"T","complexity":"low"${' '.repeat(200)}`);
    const closedAfter = await closedWithin(connection, SHORT.requestTimeoutMs + SHORT.checkIntervalMs + SLACK_MS);
    // Past the headers time-out: the body's time is the request time-out's.
    expect(closedAfter).toBeGreaterThanOrEqual(SHORT.headersTimeoutMs);
    expectContractError(answerOf(connection), 'REQUEST_TIMEOUT', 408);
  });
});
