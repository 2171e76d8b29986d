import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a receiver got. */
export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** How the receiver answers the next request: a status (3xx with a Location), or no answer within `delayMs`. */
export type Answer = { status: number; location?: string; delayMs?: number };

/**
 * A real HTTP receiver on 127.0.0.1 for webhook tests: records every request and answers as
 * told (`answer` decides per request, 200 by default). `close` stops it and `listen` starts it
 * again on the same port — a receiver outage.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  answer: (request: Received, index: number) => Answer = () => ({ status: 200 });
  private server: http.Server | null = null;
  port = 0;

  async listen(): Promise<this> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const request: Received = {
          path: req.url ?? '/',
          headers: Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, String(value)])),
          body: Buffer.concat(chunks).toString('utf8'),
        };
        const index = this.received.push(request) - 1;
        const answer = this.answer(request, index);
        const respond = () => {
          if (res.destroyed) return;
          res.writeHead(answer.status, answer.location ? { location: answer.location } : {});
          res.end('ok');
        };
        if (answer.delayMs) setTimeout(respond, answer.delayMs).unref();
        else respond();
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
