import type { Writable } from 'node:stream';
import type { Cluster, Redis } from 'ioredis';

/**
 * Every command a connection is given within one event-loop turn leaves in one socket write
 * (docs/adr/0022-coalesced-redis-writes.md). ioredis writes each command to its socket as it is
 * issued, one system call apiece; a turn that finishes a batch of jobs or answers a burst of
 * requests issues dozens. The socket is corked at a turn's first write and uncorked when the
 * turn ends (`setImmediate`), so they go out together, in order, in one `writev`. Unlike
 * ioredis's auto-pipelining, nothing is reordered and no object is made per command.
 */
export function coalesceWrites(client: Redis | Cluster): void {
  if ('nodes' in client) {
    // A cluster's node connections come and go with its topology.
    client.on('+node', (node: Redis) => coalesceWrites(node));
    return;
  }
  // Each (re)connection has a socket of its own.
  client.on('connect', () => {
    if (client.stream) corkPerTurn(client.stream);
  });
}

const CORKED = Symbol('corked per turn');

function corkPerTurn(socket: Writable & { [CORKED]?: true }): void {
  if (socket[CORKED]) return;
  socket[CORKED] = true;
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  const write = socket.write;
  socket.write = function (this: Writable, ...args: Parameters<Writable['write']>): boolean {
    if (!corked) {
      corked = true;
      socket.cork();
      setImmediate(uncork);
    }
    return (write as (...a: Parameters<Writable['write']>) => boolean).apply(this, args);
  } as Writable['write'];
}
