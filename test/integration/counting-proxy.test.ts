import net from 'node:net';
import { startCountingProxy, type CountingProxy } from '../support/counting-proxy';
import { eventually } from '../support/harness';
import { createTestEnv, type TestEnv } from '../support/test-env';

let env: TestEnv;
let proxy: CountingProxy;
beforeAll(async () => {
  env = await createTestEnv();
  proxy = await startCountingProxy(env.redisUrl);
});
afterAll(async () => {
  await proxy.close();
  await env.close();
});

/** A raw connection through the proxy, with what it has received so far. */
async function connect(): Promise<{ socket: net.Socket; received: () => string }> {
  const { hostname, port } = new URL(proxy.url);
  const socket = net.connect(Number(port), hostname);
  let text = '';
  socket.on('data', (chunk) => (text += chunk.toString()));
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  return { socket, received: () => text };
}

describe('the test proxy in front of Redis', () => {
  it('holds a connection open and answers nothing while held, then delivers what it held, in order', async () => {
    const open = await connect();
    proxy.hold();
    proxy.reset();
    open.socket.write('*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n');
    // The proxy read both commands (so they were sent) and passed none on: no answer can exist yet.
    await eventually(async () => proxy.commands().length === 2);
    expect(proxy.commands()).toEqual(['PING', 'ECHO']);
    expect(open.received()).toBe('');
    // A new connection is accepted while held, as the kernel does for a stopped server.
    const late = await connect();
    late.socket.write('*1\r\n$4\r\nPING\r\n');
    await eventually(async () => proxy.commands().length === 3);
    expect(late.received()).toBe('');
    proxy.release();
    await eventually(async () => open.received() === '+PONG\r\n$2\r\nhi\r\n' && late.received() === '+PONG\r\n');
    open.socket.destroy();
    late.socket.destroy();
  });
});
