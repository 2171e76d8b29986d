import type { Socket } from 'node:net';
import type { Redis } from 'ioredis';
import { eventually } from '../support/harness';
import { createTestEnv, type TestEnv } from '../support/test-env';
import { createRedis, type RedisClient } from '../../shared/redis/redis';

let env: TestEnv;
let clients: RedisClient[];
beforeAll(async () => {
  env = await createTestEnv();
  const target = env.clusterNodes ? { clusterNodes: nodesOf(env.clusterNodes) } : env.redisUrl;
  clients = [createRedis(target, 'producer'), createRedis(target, 'consumer')];
  await Promise.all(clients.map((client) => eventually(async () => (await client.ping().catch(() => null)) === 'PONG')));
});
afterAll(async () => {
  for (const client of clients) client.disconnect();
  await env.close();
});

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The connections a client writes commands on: itself, or each of a cluster's masters. */
async function connectionsOf(client: RedisClient): Promise<Redis[]> {
  const connections = 'nodes' in client ? client.nodes('master') : [client];
  await Promise.all(connections.map((node) => eventually(async () => (await node.ping().catch(() => null)) === 'PONG')));
  return connections;
}

/** Counts the writes a socket hands to the operating system (a `writev` of many chunks is one). */
function countWrites(socket: Socket): { count: () => number; stop: () => void } {
  let count = 0;
  const original = { write: socket._write, writev: socket._writev };
  socket._write = function (...args) {
    count++;
    return original.write.apply(this, args);
  };
  if (original.writev)
    socket._writev = function (...args) {
      count++;
      return original.writev!.apply(this, args);
    };
  return {
    count: () => count,
    stop: () => {
      socket._write = original.write;
      socket._writev = original.writev;
    },
  };
}

describe.each(['producer', 'consumer'])('Redis commands a %s issues within one event-loop turn', (role) => {
  const client = () => clients[role === 'producer' ? 0 : 1]!;

  it('wait in the socket until the turn ends, on every connection of a node or a cluster', async () => {
    const connections = await connectionsOf(client());
    const sent = connections.map((node) => node.ping());
    expect(connections.map((node) => node.stream.writableCorked)).toEqual(connections.map(() => 1));
    await nextTurn();
    expect(connections.map((node) => node.stream.writableCorked)).toEqual(connections.map(() => 0));
    expect(await Promise.all(sent)).toEqual(connections.map(() => 'PONG'));
  });

  it('reach Redis in one write, in the order they were issued', async () => {
    for (const node of await connectionsOf(client())) {
      const writes = countWrites(node.stream as Socket);
      try {
        const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => node.echo(String(i))));
        expect(writes.count()).toBe(1);
        expect(replies).toEqual(Array.from({ length: 50 }, (_, i) => String(i)));
      } finally {
        writes.stop();
      }
    }
  });

  it('of consecutive turns each leave when their own turn ends: nothing waits for a later one', async () => {
    const [node] = await connectionsOf(client());
    const writes = countWrites(node!.stream as Socket);
    try {
      for (let turn = 0; turn < 3; turn++) expect(await node!.echo(`turn ${turn}`)).toBe(`turn ${turn}`);
      expect(writes.count()).toBe(3);
    } finally {
      writes.stop();
    }
  });

  it('are coalesced on the connection that replaces a lost one', async () => {
    // A connection to one node (on a cluster, the node REDIS_URL names), which reconnects its own
    // socket; a cluster's node connections are new clients, covered above.
    const node = createRedis(env.redisUrl, role === 'producer' ? 'producer' : 'consumer') as Redis;
    try {
      await eventually(async () => (await node.ping().catch(() => null)) === 'PONG');
      const lost = node.stream;
      node.disconnect(true);
      await eventually(async () => node.stream !== lost && (await node.ping().catch(() => null)) === 'PONG');
      const writes = countWrites(node.stream as Socket);
      try {
        await Promise.all(Array.from({ length: 10 }, () => node.ping()));
        expect(writes.count()).toBe(1);
      } finally {
        writes.stop();
      }
    } finally {
      node.disconnect();
    }
  });
});

function nodesOf(list: string): { host: string; port: number }[] {
  return list.split(',').map((node) => ({ host: node.split(':')[0]!, port: Number(node.split(':')[1]) }));
}
