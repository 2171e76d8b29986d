import { randomUUID } from 'node:crypto';
import {
  maxHeaderSize as defaultMaxHeaderSize,
  ServerResponse,
  STATUS_CODES,
  type IncomingMessage,
  type Server,
  type ServerOptions,
} from 'node:http';
import type { Socket } from 'node:net';
import { AppError } from '../errors/app-error';
import type { Logger } from '../logger/logger';

/** How long a client may take to send a request, and how often the server checks. */
export interface HttpServerLimits {
  /** The request line and headers must arrive within this (ms). */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this (ms); at least `headersTimeoutMs`. */
  requestTimeoutMs: number;
  /** How often the server looks for connections past those limits (ms). */
  checkIntervalMs: number;
}

/**
 * The API's and the dashboard's limits. Node's defaults (60 s for headers, 300 s for a request,
 * checked every 30 s) let a client that sends a byte a second hold a socket for minutes; with
 * these it is answered 408 and freed within about 11 s (headers) or 21 s (a body).
 */
export const HTTP_SERVER_LIMITS: HttpServerLimits = { headersTimeoutMs: 10_000, requestTimeoutMs: 20_000, checkIntervalMs: 1_000 };

/**
 * The `http.createServer` options for `limits`: the check interval can only be given there, so
 * the time-outs go with it.
 */
export function serverOptions(limits: HttpServerLimits = HTTP_SERVER_LIMITS): ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: limits.checkIntervalMs,
    // An HTTP/1.1 request without Host is refused by answerClientErrors, in the envelope: Node's
    // own refusal is a bare 400 without a body or an X-Request-Id.
    requireHostHeader: false,
  };
}

/** The contract's error for what Node's HTTP parser or its time-outs reject, before any app code runs. */
function toAppError(error: NodeJS.ErrnoException, server: Server): AppError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW': {
      // Set when the server was created with a `maxHeaderSize` option; else the process's limit.
      const limit = (server as Server & { maxHeaderSize?: number }).maxHeaderSize ?? defaultMaxHeaderSize;
      return new AppError('HEADERS_TOO_LARGE', `Request line and headers exceed ${limit} bytes`, { limit });
    }
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError(
        'REQUEST_TIMEOUT',
        `The request did not arrive in time: headers within ${server.headersTimeout / 1000} s, ` +
          `the whole request within ${server.requestTimeout / 1000} s`,
      );
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      // Node's own answer to this is a 413; 16 KiB is its fixed limit on a body's chunk extensions.
      return new AppError('PAYLOAD_TOO_LARGE', 'Chunk extensions of the body exceed 16384 bytes', { limit: 16_384 });
    default:
      return new AppError('VALIDATION_ERROR', 'Invalid request: it is not a well-formed HTTP/1.1 request', {
        fields: [{ field: '(request)', message: 'must be a well-formed HTTP/1.1 request' }],
      });
  }
}

/** What the API's request log accepts as a request id; checked again here, as it goes into a raw header. */
const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The id of the request whose response is in flight on this socket, when the API's request log gave it one. */
function inFlightRequestId(socket: Socket): string | undefined {
  const message = (socket as Socket & { _httpMessage?: { locals?: { requestId?: unknown } } })._httpMessage;
  const id = message?.locals?.requestId;
  return typeof id === 'string' && REQUEST_ID.test(id) ? id : undefined;
}

/**
 * Whether the request being received on this socket has already been answered: the app may
 * answer before the body is in (a 401 before the body is read, a GET whose body is ignored), and
 * Node then reads the rest of the body on the same connection. The parser still holds that
 * request while its body is incomplete; its response, once finished, has left the socket.
 */
function answeredBeforeItsBody(socket: Socket): boolean {
  const { parser, _httpMessage: inFlight } = socket as Socket & { parser?: { incoming?: unknown } | null; _httpMessage?: unknown };
  return parser?.incoming != null && inFlight == null;
}

/**
 * Answers what Node's HTTP parser and time-outs reject (a malformed request 400, headers over
 * the size limit 431, a request too slow 408, ...) with the service's JSON error envelope and an
 * X-Request-Id, instead of Node's empty body, then destroys the socket: the parser cannot go on
 * with that connection, and a slow client must not keep it. As Node's documentation asks, nothing
 * is written to a socket that cannot take it or whose response has already begun or been sent
 * (that would corrupt the answer the client is reading, or add a second answer to one request).
 * What Node would answer on its own with an empty body, or not at all, goes to the contract too:
 * an HTTP/1.1 request without Host (400 in the envelope), a CONNECT (to the app: 404 or 405), an
 * Expect other than 100-continue (ignored).
 */
export function answerClientErrors<S extends Server>(server: S, logger?: Logger): S {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent || answeredBeforeItsBody(socket)) {
      socket.destroy();
      return;
    }
    // The API's request log gives ids with randomUUID too; a request already dispatched keeps its own.
    answerAndClose(socket, toAppError(error, server), inFlightRequestId(socket) ?? randomUUID(), error.code, logger);
  });
  refuseWithoutHost(server, logger);
  // CONNECT (a proxy's method) reaches the app like any other method, which answers it 404 or 405
  // with Allow; Node would close the connection without a word. The connection closes after it.
  server.on('connect', (req: IncomingMessage, socket: Socket) => {
    // A proxy's target (`host:port`) is no path of this server.
    if (!req.url?.startsWith('/')) {
      const target = (req.url ?? '').slice(0, 200);
      return answerAndClose(socket, new AppError('NOT_FOUND', `No route for CONNECT ${target}`), randomUUID(), 'CONNECT', logger);
    }
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket);
    res.on('finish', () => socket.end());
    server.emit('request', req, res);
  });
  // An expectation other than 100-continue is ignored, as HTTP allows, rather than answered 417
  // by Node with an empty body: the request is served as if it had none.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => void server.emit('request', req, res));
  return server;
}

/** A refusal in the envelope under `requestId`, logged: its body and its headers but Connection. */
function refusal(appError: AppError, requestId: string, cause: string | undefined, logger?: Logger) {
  logger?.info({ reqId: requestId, status: appError.statusCode, code: cause }, 'client error');
  const body = JSON.stringify(appError.toBody(requestId));
  const headers = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    'X-Request-Id': requestId,
  };
  return { body, headers };
}

/** Writes `appError` in the envelope with `requestId` as a whole response, then destroys the socket. */
function answerAndClose(socket: Socket, appError: AppError, requestId: string, cause: string | undefined, logger?: Logger): void {
  const { body, headers } = refusal(appError, requestId, cause, logger);
  const head = [
    `HTTP/1.1 ${appError.statusCode} ${STATUS_CODES[appError.statusCode]}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    'Connection: close',
  ];
  // A response this small goes out at once; destroying right after is what Node does with its own.
  socket.write(`${head.join('\r\n')}\r\n\r\n${body}`);
  socket.destroy();
}

/**
 * An HTTP/1.1 request without a Host header is not a well-formed one (RFC 9112): it is answered
 * 400 in the envelope, as the parser's errors are, before any other listener sees it.
 */
function refuseWithoutHost(server: Server, logger?: Logger): void {
  const listeners = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor === 1) {
      const error = new AppError('VALIDATION_ERROR', 'Invalid request: an HTTP/1.1 request needs a Host header', {
        fields: [{ field: '(request)', message: 'must be a well-formed HTTP/1.1 request' }],
      });
      const { body, headers } = refusal(error, randomUUID(), 'missing Host', logger);
      res.shouldKeepAlive = false;
      return void res.writeHead(error.statusCode, headers).end(body);
    }
    for (const listener of listeners) listener(req, res);
  });
}
