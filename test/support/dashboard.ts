import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort } from '../../scripts/local-services';
import { createDashboardApp } from '../../dashboard/app';
import { buildDashboardDependencies, type DashboardDeps } from '../../dashboard/dependencies';
import { loadDashboardConfig } from '../../shared/config/config';
import { createLogger } from '../../shared/logger/logger';
import { hashPassword } from '../../shared/dashboard-users/password';
import { createUser, type Role } from '../../shared/dashboard-users/user.repository';
import type { Db } from '../../shared/db/database';
import { findOrCreateAccount } from '../../shared/accounts/account.repository';
import { spawnBuilt, type Spawned } from './processes';
import type { TestEnv } from './test-env';

/** The built dashboard as a real process on a free port; resolves once /healthz answers. */
export async function spawnDashboard(env: NodeJS.ProcessEnv): Promise<Spawned & { url: string }> {
  const port = await freePort();
  const dashboard = spawnBuilt('dashboard/main.js', { ...env, DASHBOARD_PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline && dashboard.child.exitCode === null) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return { ...dashboard, url };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  dashboard.child.kill('SIGKILL');
  throw new Error(`dashboard did not start: ${dashboard.output()}`);
}

/**
 * The dashboard run in this process over the test env's Postgres and Redis, trusting loopback
 * proxies (each DashboardClient presents its own address), its clock `clock`: for tests that move time.
 */
export async function startDashboardInProcess(
  env: TestEnv,
  clock: () => number,
): Promise<{ deps: DashboardDeps; url: string; close: () => Promise<void> }> {
  const config = loadDashboardConfig(env.processEnv({ TRUST_PROXY: 'loopback' }));
  const deps = buildDashboardDependencies(config, createLogger('silent', 'test'), clock);
  const server = createServer(createDashboardApp(deps));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = async () => {
    await new Promise((resolve) => server.close(resolve));
    await deps.close();
  };
  return { deps, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close };
}

/** A dashboard user (and their account, created if missing) with a known password. */
export async function addUser(db: Db, account: string, email: string, role: Role, password = 'a long enough password'): Promise<string> {
  const { id } = await findOrCreateAccount(db, account);
  await createUser(db, { accountId: id, email, role, passwordHash: await hashPassword(password) });
  return id;
}

export interface PageResponse {
  status: number;
  body: string;
  headers: Headers;
  location: string | null;
}

/**
 * A minimal browser for the dashboard: keeps the session cookie, reads the CSRF token from the
 * last page, sends forms with this dashboard's Origin, and presents itself as the client
 * `forwardedFor` (the dashboard under test trusts loopback proxies).
 */
export class DashboardClient {
  cookie: string | undefined;
  /** The remembered-device cookie, once a sign-in gave one (sent with every request after, as a browser does). */
  device: string | undefined;
  csrf: string | undefined;
  /** `__Host-` once the dashboard named its cookies so (secure cookies): they are sent back under those names. */
  prefix = '';
  /** The last page's one-time form token (each rendering of a page has its own). */
  once: string | undefined;

  constructor(
    readonly url: string,
    readonly forwardedFor: string,
    /** Sent with every request, e.g. the X-Forwarded-Proto of a TLS-terminating proxy. */
    readonly headers: Record<string, string> = {},
  ) {}

  private remember(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const device = /^(__Host-)?cos_device=([^;]*)/.exec(line);
      if (device) [this.prefix, this.device] = [device[1] ?? '', device[2]];
      const match = /^(__Host-)?cos_dashboard=([^;]*)/.exec(line);
      if (!match) continue;
      this.prefix = match[1] ?? '';
      this.cookie = /Expires=Thu, 01 Jan 1970/i.test(line) || match[2] === '' ? undefined : match[2];
    }
  }

  private async send(method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}): Promise<PageResponse> {
    const res = await fetch(`${this.url}${path}`, {
      method,
      redirect: 'manual',
      body: init.body,
      headers: {
        'X-Forwarded-For': this.forwardedFor,
        Accept: 'text/html',
        ...this.headers,
        ...(this.cookie || this.device ? { Cookie: this.cookies() } : {}),
        ...init.headers,
      },
    });
    this.remember(res);
    const body = await res.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(body)?.[1];
    if (token) this.csrf = token;
    const once = /name="_once" value="([^"]+)"/.exec(body)?.[1];
    if (once) this.once = once;
    return { status: res.status, body, headers: res.headers, location: res.headers.get('location') };
  }

  private cookies(): string {
    const jar = [
      this.cookie ? `${this.prefix}cos_dashboard=${this.cookie}` : '',
      this.device ? `${this.prefix}cos_device=${this.device}` : '',
    ];
    return jar.filter(Boolean).join('; ');
  }

  get(path: string, headers: Record<string, string> = {}): Promise<PageResponse> {
    return this.send('GET', path, { headers });
  }

  /**
   * Posts a form; `_csrf` and `_once` are the last page's tokens unless the fields give them (or
   * `null` to leave one out). Like a browser, it sends the same one-time token again until a page
   * with a new one is loaded.
   */
  post(path: string, fields: Record<string, string | string[] | null> = {}, headers: Record<string, string> = {}): Promise<PageResponse> {
    const form = new URLSearchParams();
    const all = { _csrf: this.csrf ?? null, _once: this.once ?? null, ...fields };
    for (const [name, value] of Object.entries(all)) {
      if (value === null) continue;
      for (const item of Array.isArray(value) ? value : [value]) form.append(name, item);
    }
    return this.send('POST', path, {
      body: form.toString(),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: this.url, ...headers },
    });
  }

  /** Posts a form and, as a browser does, follows its redirect: the page it leads to (with the redirect's status and location). */
  async submit(
    path: string,
    fields: Record<string, string | string[] | null> = {},
  ): Promise<{ posted: PageResponse; page: PageResponse | null }> {
    const posted = await this.post(path, fields);
    const page = posted.status === 303 && posted.location ? await this.get(posted.location) : null;
    return { posted, page };
  }

  /** Signs in as a browser does: the form, the post, then the page it redirects to (whose forms carry the new session's token). */
  async signIn(email: string, password = 'a long enough password'): Promise<PageResponse> {
    await this.get('/signin');
    const res = await this.post('/signin', { email, password });
    if (res.status === 303 && res.location) await this.get(res.location);
    return res;
  }

  /** The session id in the cookie (`s:<id>.<signature>`), as connect-redis names its key. */
  sessionId(): string | undefined {
    return this.cookie ? /^s:([^.]+)\./.exec(decodeURIComponent(this.cookie))?.[1] : undefined;
  }
}
