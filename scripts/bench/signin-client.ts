import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { freePort } from '../local-services';
import { HOST, startProc, waitUntil, type Proc } from './processes';

/**
 * bench:signin's side of the dashboard's sign-in form: the built dashboard as a process, a
 * session with its CSRF token as a browser gets it from GET /signin, one POST /signin attempt
 * presented as coming from a given client address, and those addresses.
 */

export interface Dashboard {
  proc: Proc;
  port: number;
}

/**
 * Starts the built dashboard on a free port of 127.0.0.1. It trusts X-Forwarded-For from
 * loopback, so each attempt can name its own client address while every connection still goes
 * to 127.0.0.1.
 */
export async function startDashboard(env: NodeJS.ProcessEnv): Promise<Dashboard> {
  const port = await freePort();
  const main = path.join(__dirname, '../../dashboard/main.js');
  const proc = startProc('dashboard', [main], { ...env, DASHBOARD_PORT: String(port), TRUST_PROXY: 'loopback' });
  await waitUntil('the dashboard to listen', 20_000, 100, async () => {
    if (proc.child.exitCode !== null) throw new Error(`dashboard exited: ${proc.output()}`);
    const res = await fetch(`http://${HOST}:${port}/healthz`).catch(() => undefined);
    return res?.ok ? true : undefined;
  });
  return { proc, port };
}

/** 198.18.0.0/15: the addresses set aside for benchmarks (RFC 2544). */
const BENCH_ADDRESSES = 2 ** 17;

/**
 * The `n`th client address, for X-Forwarded-For only (nothing connects to it). Past 131,072 they
 * repeat, which the throttle tolerates: only verified failures count against an address.
 */
export function clientAddress(n: number): string {
  const i = n % BENCH_ADDRESSES;
  return `198.${18 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
}

/** A visitor's session: its cookie and the sign-in form's CSRF token. */
export interface SignInSession {
  port: number;
  cookie: string;
  csrf: string;
}

/** Opens a session as a browser does: GET /signin, keeping the `cos_dashboard` cookie and the form's hidden `_csrf`. */
export async function openSession(port: number): Promise<SignInSession> {
  const res = await fetch(`http://${HOST}:${port}/signin`, { headers: { Accept: 'text/html' } });
  const cookie = res.headers
    .getSetCookie()
    .map((line) => /^cos_dashboard=([^;]+)/.exec(line)?.[1])
    .find((value) => value !== undefined);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await res.text())?.[1];
  if (!cookie || !csrf) throw new Error(`GET /signin gave no session cookie or CSRF token (status ${res.status})`);
  return { port, cookie: `cos_dashboard=${cookie}`, csrf };
}

export interface AttemptInput {
  email: string;
  password: string;
  /** The client address the attempt claims (X-Forwarded-For). */
  client: string;
  /** `text/html` as a browser's form post; `application/json` for the shorter error envelope. */
  accept: string;
}

export interface AttemptAnswer {
  status: number;
  /** The Retry-After header of a 429: 1 s means the verifications were busy, minutes the throttle. */
  retryAfter: string | undefined;
  /** From sending the request to the end of the answer's body. */
  ms: number;
}

/** One POST /signin over `agent` (keep-alive, so the timing holds no connection set-up); rejects on a network error or after `timeoutMs`. */
export function attemptSignIn(session: SignInSession, agent: http.Agent, input: AttemptInput, timeoutMs = 10_000): Promise<AttemptAnswer> {
  const body = new URLSearchParams({ email: input.email, password: input.password, _csrf: session.csrf }).toString();
  const headers = {
    'Content-Type': 'application/x-www-form-urlencoded',
    'Content-Length': String(Buffer.byteLength(body)),
    Origin: `http://${HOST}:${session.port}`,
    Cookie: session.cookie,
    Accept: input.accept,
    'X-Forwarded-For': input.client,
  };
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const req = http.request(
      { host: HOST, port: session.port, method: 'POST', path: '/signin', agent, headers, timeout: timeoutMs },
      (res) => {
        res.resume();
        res.on('error', reject);
        res.on('end', () => {
          const retryAfter = res.headers['retry-after'];
          resolve({ status: res.statusCode ?? 0, retryAfter, ms: performance.now() - start });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** How an answer is counted: a 429 is split into "busy" (the verifications were full) and "throttled" (the address or email ran out). */
export function answerLabel(answer: AttemptAnswer): string {
  if (answer.status !== 429) return String(answer.status);
  return answer.retryAfter === '1' ? '429 busy' : '429 throttled';
}
