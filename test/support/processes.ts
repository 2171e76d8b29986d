import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../../scripts/local-services';

const DIST = path.join(__dirname, '../../dist');

export interface Spawned {
  child: ChildProcess;
  output: () => string;
  /** Resolves with the exit code (or signal name) when the process ends. */
  exited: Promise<number | string>;
}

/** Runs a built entrypoint (dist/…) as a real process, capturing its output. */
export function spawnBuilt(entry: 'api/main.js' | 'worker/main.js' | 'dashboard/main.js', env: NodeJS.ProcessEnv): Spawned {
  const child = spawn(process.execPath, [path.join(DIST, entry)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code ?? -1)));
  return { child, output: () => output, exited };
}

export async function spawnApi(env: NodeJS.ProcessEnv): Promise<Spawned & { url: string }> {
  const port = await freePort();
  const api = spawnBuilt('api/main.js', { ...env, PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${url}/readyz`);
      if (res.ok) return { ...api, url };
    } catch {
      // not listening yet
    }
    if (api.child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  api.child.kill('SIGKILL');
  throw new Error(`api did not start: ${api.output()}`);
}

export async function stop(spawned: Spawned, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | string> {
  if (spawned.child.exitCode === null && spawned.child.signalCode === null) spawned.child.kill(signal);
  return spawned.exited;
}

/** A small JSON client for a spawned API. */
export function client(url: string, key: string) {
  const call = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(`${url}${route}`, {
      method,
      headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  };
  return {
    context: (userId: string, complexity = 'medium', extra: Record<string, unknown> = {}) =>
      call('POST', '/v1/context', { userId, task: 'A task', complexity, ...extra }),
    outcome: (body: Record<string, unknown>) => call('POST', '/v1/outcome', body),
    profile: (userId: string) => call('GET', `/v1/profile/${encodeURIComponent(userId)}`),
    put: (userId: string, body: unknown) => call('PUT', `/v1/profile/${encodeURIComponent(userId)}`, body),
    versions: (userId: string, query = '') => call('GET', `/v1/profile/${encodeURIComponent(userId)}/versions${query}`),
  };
}
