import type { Server } from 'node:net';
import type { Logger } from '../logger/logger';

/**
 * Where a listening server is bound, for its "listening" log line: the address HOST resolved to
 * and the port (the one the system picked when the port asked for was 0).
 */
export function listeningOn(server: Server): { host: string; port: number } {
  const address = server.address();
  return typeof address === 'object' && address ? { host: address.address, port: address.port } : { host: String(address), port: 0 };
}

/** What an operator should change when listening fails, by the error's code. */
function remedy(code: unknown, portVariable: string): string {
  switch (code) {
    case 'EADDRINUSE':
      return `the port is in use: stop what holds it or set another ${portVariable}`;
    case 'EACCES':
      return `ports below 1024 need privileges: set ${portVariable} to 1024 or above`;
    case 'EADDRNOTAVAIL':
      return 'HOST is not an address of this machine: set one of its addresses, or 0.0.0.0 for every interface';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'HOST does not resolve to an address: set an IP address, or a name this machine resolves';
    default:
      return `check HOST and ${portVariable}`;
  }
}

/** A server to listen with, where, and what to do once it listens. */
export interface Listening {
  server: Server;
  /** HOST, the port, and the name of the port's variable (for the remedy in the log). */
  where: { port: number; host: string; portVariable: string };
  logger: Logger;
  onListening: () => void;
}

/**
 * Listens on HOST and the port; if it cannot (port in use, HOST not an address of this machine),
 * logs what to change and exits 1 rather than crashing on an unhandled error event.
 */
export function listenOrExit({ server, where, logger, onListening }: Listening): void {
  const fail = (error: NodeJS.ErrnoException) => {
    logger.fatal(
      { err: error, host: where.host, port: where.port },
      `cannot listen on ${where.host}:${where.port}: ${remedy(error.code, where.portVariable)}`,
    );
    process.exit(1);
  };
  server.once('error', fail);
  server.listen(where.port, where.host, () => {
    server.off('error', fail);
    onListening();
  });
}
