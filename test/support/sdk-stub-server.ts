import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface StubRequest {
  method: string;
  /** The request target as it arrived, before any decoding or normalization. */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** What the stub does with a request: answer it, reset its connection, or never answer. */
export type StubAnswer = { status: number; headers?: Record<string, string>; body?: unknown } | 'reset' | 'hang';

export interface StubServer {
  baseUrl: string;
  requests: StubRequest[];
  /** TCP connections accepted so far. */
  connections: () => number;
  close: () => Promise<void>;
}

/**
 * A local HTTP server that records every request the SDK sends and answers each as `answer`
 * says (given the request and its 1-based number), for SDK behaviour the service cannot be made
 * to show on demand.
 */
export async function startStubServer(answer: (request: StubRequest, n: number) => StubAnswer): Promise<StubServer> {
  const requests: StubRequest[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(request);
      const planned = answer(request, requests.length);
      if (planned === 'hang') return;
      if (planned === 'reset') return void req.socket.destroy();
      const body = planned.body === undefined ? undefined : JSON.stringify(planned.body);
      res.writeHead(planned.status, { ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...planned.headers });
      res.end(body);
    });
  });
  server.on('connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    connections: () => connections,
    close: async () => {
      sockets.forEach((socket) => socket.destroy());
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
