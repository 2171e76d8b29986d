import http from 'node:http';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../../scripts/local-services';
import { apiUrl, checkApiExchange, isApiUrl } from './api-responses';
import { sentPath } from './openapi';

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

/**
 * The status of a GET on a connection of its own (node:cluster hands each new connection to the
 * next process); 0 when the connection fails.
 */
export const statusOnNewConnection = (url: string, headers: http.OutgoingHttpHeaders = {}) =>
  new Promise<number>((resolve) => {
    http
      .get(url, { agent: false, headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          if (isApiUrl(url)) checkApiExchange({ method: 'GET', path: sentPath(url), status: res.statusCode!, headers: res.headers, text });
          resolve(res.statusCode!);
        });
      })
      .on('error', () => resolve(0));
  });

/**
 * Starts the built API on a free port and waits until it is ready — with API_PROCESSES=N, until
 * N × 3 readiness checks in a row on new connections pass, so that every process is (one that is
 * still connecting answers 503, as it should, but a test must not meet it). A port found free
 * can be taken by another test's process before the API binds it: then it starts again on
 * another.
 */
export async function spawnApi(env: NodeJS.ProcessEnv): Promise<Spawned & { url: string }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const api = spawnBuilt('api/main.js', { ...env, PORT: String(port) });
    const url = `http://127.0.0.1:${port}`;
    if (await untilApiReady(api, url, Math.max(1, Number(env.API_PROCESSES ?? 1)) * 3)) return { ...api, url: apiUrl(url) };
    api.child.kill('SIGKILL');
    await api.exited;
    if (attempt >= 3 || !api.output().includes('EADDRINUSE')) throw new Error(`api did not start: ${api.output()}`);
  }
}

/** Whether `needed` readiness checks in a row pass within 20 s, while the process lives. */
async function untilApiReady(api: Spawned, url: string, needed: number): Promise<boolean> {
  const deadline = Date.now() + 20_000;
  let inARow = 0;
  while (Date.now() < deadline) {
    inARow = (await statusOnNewConnection(`${url}/readyz`)) === 200 ? inARow + 1 : 0;
    if (inARow >= needed) return true;
    if (api.child.exitCode !== null) return false;
    if (inARow === 0) await new Promise((r) => setTimeout(r, 100));
  }
  return false;
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
