import { RespCommandReader } from './resp-commands';
import net from 'node:net';

/**
 * A TCP proxy in front of Redis or Postgres that counts what clients send, and can cut them off
 * as an outage does, or hold everything as a hung server does. Each client→server write of a request/response protocol is one round trip,
 * so tests can check the hot path's budget against the real servers without mocking them; and
 * `interrupt` makes the server unreachable for the proxy's clients only (connections reset, new
 * ones refused), while the rest of the suite keeps using it.
 */
export interface CountingProxy {
  url: string;
  writes(): number;
  /**
   * Redis commands its clients sent since the last `reset`, by name in order (parsed from the
   * protocol: a pipelined write of several commands counts each). Only for a Redis target.
   */
  commands(): string[];
  reset(): void;
  /** Resets every connection and refuses new ones until `resume`. */
  interrupt(): Promise<void>;
  /**
   * A hang, as of a server stopped with SIGSTOP: connections stay open and new ones are
   * accepted, but nothing reaches the server and nothing comes back until `release`, which
   * delivers what was held, in order.
   */
  hold(): void;
  release(): void;
  /** Accepts connections again, on the same port. */
  resume(): Promise<void>;
  /** `url` (another database of the same server, say) reached through the proxy. */
  via(url: string): string;
  close(): Promise<void>;
}

export async function startCountingProxy(targetUrl: string): Promise<CountingProxy> {
  const target = new URL(targetUrl);
  const redis = target.protocol === 'redis:';
  let writes = 0;
  let commands: string[] = [];
  const sockets = new Set<net.Socket>();
  /** While held: each connection's bytes not yet delivered, per direction, and how to deliver them. */
  let held: Set<() => void> | null = null;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(client);
    sockets.add(upstream);
    const reader = redis ? new RespCommandReader((name) => commands.push(name)) : null;
    const forward = (to: net.Socket, chunk: Buffer) => {
      if (held) held.add(() => to.write(chunk));
      else to.write(chunk);
    };
    client.on('data', (chunk: Buffer) => {
      writes++;
      reader?.push(chunk);
      forward(upstream, chunk);
    });
    upstream.on('data', (chunk: Buffer) => forward(client, chunk));
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject).listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  const stopListening = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      if (!server.listening) return resolve();
      server.close(() => resolve());
    });
  await listen(0);
  const port = (server.address() as net.AddressInfo).port;
  const via = (url: string) => {
    const proxied = new URL(url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(port);
    return proxied.toString();
  };
  return {
    url: via(targetUrl),
    writes: () => writes,
    commands: () => {
      if (!redis) throw new Error('commands() counts Redis commands: this proxy is in front of another server');
      return [...commands];
    },
    reset: () => {
      writes = 0;
      commands = [];
    },
    interrupt: stopListening,
    hold: () => {
      held ??= new Set();
    },
    release: () => {
      const deliveries = held;
      held = null;
      for (const deliver of deliveries ?? []) deliver();
    },
    resume: async () => {
      if (!server.listening) await listen(port);
    },
    via,
    close: stopListening,
  };
}
