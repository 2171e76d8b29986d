import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import { answerClientErrors, HTTP_SERVER_LIMITS, serverOptions } from '../../shared/http/client-errors';

/** A socket as the server's 'clientError' hands it over, recording what the handler does with it. */
function fakeSocket(state: { writable?: boolean; headersSent?: boolean; requestId?: string } = {}) {
  const socket = {
    writable: state.writable ?? true,
    _httpMessage: state.headersSent === undefined ? undefined : { headersSent: state.headersSent, locals: { requestId: state.requestId } },
    write: jest.fn(),
    destroy: jest.fn(),
  };
  return socket;
}

const parseError = (code: string) => Object.assign(new Error('Parse Error'), { code });

function clientError(error: Error, socket: ReturnType<typeof fakeSocket>) {
  const server = answerClientErrors(createServer(serverOptions()));
  server.emit('clientError', error, socket as unknown as Socket);
  return socket;
}

describe('answerClientErrors', () => {
  it('answers a parser error with the JSON envelope, an X-Request-Id and Connection: close, then destroys the socket', () => {
    const socket = clientError(parseError('HPE_INVALID_METHOD'), fakeSocket());
    expect(socket.write).toHaveBeenCalledTimes(1);
    const text = socket.write.mock.calls[0][0] as string;
    expect(text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(text).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/);
    expect(text).toMatch(/\r\nConnection: close\r\n/);
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: { code: 'VALIDATION_ERROR', statusCode: 400 } });
    expect(socket.destroy).toHaveBeenCalledTimes(1);
  });

  it('writes nothing once the response on that connection has begun: it would corrupt what the client is reading', () => {
    const socket = clientError(parseError('HPE_INVALID_CONSTANT'), fakeSocket({ headersSent: true }));
    expect(socket.write).not.toHaveBeenCalled();
    expect(socket.destroy).toHaveBeenCalledTimes(1);
  });

  it('writes nothing to a reset or unwritable socket, only destroys it', () => {
    for (const [error, socket] of [
      [parseError('ECONNRESET'), fakeSocket()],
      [parseError('HPE_INVALID_METHOD'), fakeSocket({ writable: false })],
    ] as const) {
      clientError(error, socket);
      expect(socket.write).not.toHaveBeenCalled();
      expect(socket.destroy).toHaveBeenCalledTimes(1);
    }
  });

  it('answers a time-out of a request already dispatched under that request’s id', () => {
    const socket = clientError(parseError('ERR_HTTP_REQUEST_TIMEOUT'), fakeSocket({ headersSent: false, requestId: 'given-1' }));
    const text = socket.write.mock.calls[0][0] as string;
    expect(text).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(text).toMatch(/\r\nX-Request-Id: given-1\r\n/);
  });

  it('frees a slow client well within 30 s, and keeps the headers time-out within the request time-out (Node requires it)', () => {
    const { headersTimeoutMs, requestTimeoutMs, checkIntervalMs } = HTTP_SERVER_LIMITS;
    expect(requestTimeoutMs + checkIntervalMs).toBeLessThan(30_000);
    expect(headersTimeoutMs).toBeLessThanOrEqual(requestTimeoutMs);
    const server = createServer(serverOptions());
    expect({ headers: server.headersTimeout, request: server.requestTimeout }).toEqual({
      headers: headersTimeoutMs,
      request: requestTimeoutMs,
    });
  });
});
