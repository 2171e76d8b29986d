import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import net, { type AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { Limiter, type LimitDecision, type LimitInput } from '../../shared/limits/limiter';
import { createRedis, type RedisClient } from '../../shared/redis/redis';
import { startCountingProxy, type CountingProxy } from '../support/counting-proxy';
import { eventually } from '../support/harness';
import { createTestEnv, type TestEnv } from '../support/test-env';

/**
 * sendScript (shared/redis/scripts.ts) against a real Redis: a script Redis does not hold yet is
 * sent as EVAL; a reply that comes after the client's command timeout reaches the caller's `late`
 * handler, and a command that never reached Redis never does. On a Redis server of this file's own: the
 * first test flushes its scripts, which a shared server's other clients would notice.
 */
let env: TestEnv;
let server: ChildProcess;
let own: Redis;
let proxy: CountingProxy;
let redis: RedisClient;
let limiter: Limiter;

async function freePort(): Promise<number> {
  const probe = net.createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => probe.once('listening', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

beforeAll(async () => {
  env = await createTestEnv();
  const port = await freePort();
  server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const exited = new Promise<never>((_, reject) => {
    server.once('error', reject);
    server.once('exit', (code) => reject(new Error(`redis-server exited (${code}) before it answered`)));
  });
  own = new Redis(port, '127.0.0.1', { retryStrategy: (attempt) => (attempt > 50 ? null : 100) });
  await Promise.race([own.ping(), exited]);
  // The port could have been taken between the probe and the start: flush only a server of our own.
  expect(Number(/process_id:(\d+)/.exec(await own.info('server'))?.[1])).toBe(server.pid);
  proxy = await startCountingProxy(`redis://127.0.0.1:${port}`);
  redis = createRedis(proxy.url, 'producer', 300);
  limiter = new Limiter(redis, env.keys);
  if ((redis as { status?: string }).status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
});
afterAll(async () => {
  server?.kill('SIGKILL');
  redis?.disconnect();
  own?.disconnect();
  await proxy?.close();
  await env?.close();
});

const input = (): LimitInput => ({ accountId: randomUUID(), keyId: randomUUID(), endpoint: 'context', perSecond: 10, perMonth: null });
/** The usage counted on the file's server for `keyId` today. */
async function usage(keyId: string): Promise<Record<string, string>> {
  const all = await own.hgetall(env.keys.usage(new Date().toISOString().slice(0, 10)));
  return Object.fromEntries(Object.entries(all).filter(([field]) => field.startsWith(`${keyId}|`)));
}

it('sends a script Redis does not hold as EVAL', async () => {
  await own.script('FLUSH');
  proxy.reset();
  expect((await limiter.check(input())).allowed).toBe(true);
  expect(proxy.commands()).toEqual(['EVALSHA', 'EVAL']);
  proxy.reset();
  expect((await limiter.check(input())).allowed).toBe(true);
  expect(proxy.commands()).toEqual(['EVALSHA']);
});

it('hands a reply that came after the command timeout to `late`', async () => {
  const late: LimitDecision[] = [];
  const limits = input();
  proxy.hold();
  const sent = limiter.send(limiter.prepare(limits), (decision) => late.push(decision));
  await expect(sent).rejects.toThrow('Command timed out');
  expect(late).toEqual([]);
  proxy.release();
  await eventually(async () => late.length > 0);
  expect(late).toMatchObject([{ allowed: true, limit: 10, remaining: 9 }]);
  // The script ran: the request was metered (as 2xx) in Redis.
  expect(await usage(limits.keyId)).toEqual({ [`${limits.keyId}|context|2xx`]: '1' });
});

it('never calls `late` for a command flushed with its lost connection: Redis never ran it', async () => {
  const late: LimitDecision[] = [];
  const limits = input();
  proxy.hold();
  const sent = limiter.send(limiter.prepare(limits), (decision) => late.push(decision));
  // The held bytes go with the connections, and the reconnection is refused until `resume`.
  await proxy.interrupt();
  await expect(sent).rejects.toThrow();
  proxy.release();
  await proxy.resume();
  await new Promise((r) => setTimeout(r, 1000));
  expect(await usage(limits.keyId)).toEqual({});
  expect(late).toEqual([]);
});
