import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { Redis } from 'ioredis';
import { freePort, serviceSpecs, startLocalServices, type LocalServices } from '../../scripts/local-services';
import { Supervisor } from '../../scripts/supervisor';
import { eventually } from '../support/harness';
import { createTestEnv, type TestEnv } from '../support/test-env';
import { alive, childrenOf } from '../../scripts/process-tree';

/**
 * `npm start` supervises what it starts: the Supervisor (scripts/supervisor.ts) with real child
 * processes, the Postgres and Redis it starts, and the built `npm start` itself.
 */
const ROOT = path.join(__dirname, '../..');

interface Running {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | string>;
}

function run(args: string[], env: NodeJS.ProcessEnv, options: { detached?: boolean } = {}): Running {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: options.detached });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code ?? -1)));
  return { child, output: () => output, exited };
}

const commandLine = (pid: number): string[] => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
};

/** The child pids of `parent` by the last word of their command line (a program's name, or its script). */
function childPids(parent: number): Record<string, number> {
  return Object.fromEntries(childrenOf(parent).map((pid) => [commandLine(pid).at(-1) ?? '', pid]));
}

const stillRunning = new Set<Running>();
afterEach(() => {
  // A test that failed half-way leaves nothing behind: its host and the host's children.
  for (const running of stillRunning) {
    for (const pid of childrenOf(running.child.pid!)) process.kill(pid, 'SIGKILL');
    running.child.kill('SIGKILL');
  }
  stillRunning.clear();
});

describe('the supervisor, with real child processes', () => {
  /**
   * Sleeps until told: SIGUSR2 makes it exit 1 (a crash); SIGTERM, exit 1 a moment later, as a
   * worker that did not drain. It says when its handlers are in place.
   */
  const SLEEPER = `
    const name = process.argv[1];
    process.on('SIGUSR2', () => process.exit(1));
    process.on('SIGTERM', () => {
      console.log(name + ' got SIGTERM');
      setTimeout(() => process.exit(1), 100);
    });
    setInterval(() => {}, 1 << 30);
    console.log(name + ' running as ' + process.pid);`;
  const FIXTURE = path.join(ROOT, 'test/support/supervise-fixture.mjs');

  function host(groups: { name: string; code: string }[][], policy?: object): Running {
    const running = run([FIXTURE], { ...process.env, SUPERVISE_CONFIG: JSON.stringify({ groups, policy }) });
    stillRunning.add(running);
    return running;
  }
  const sleepers = (...names: string[]) => names.map((name) => ({ name, code: SLEEPER }));
  /** Waits until every sleeper of `host` is running, a new run of each named in `replaced`; returns their pids. */
  const runningSleepers = (supervisor: Running, names: string[], replaced: Record<string, number> = {}) =>
    eventually(async () => {
      const pids = childPids(supervisor.child.pid!);
      const ready = names.every(
        (name) => pids[name] && pids[name] !== replaced[name] && supervisor.output().includes(`${name} running as ${pids[name]}\n`),
      );
      return ready ? pids : null;
    });

  it('restarts a child killed with SIGKILL or exiting 1 after 0.5 s, and leaves the others alone', async () => {
    const supervisor = host([sleepers('alpha'), sleepers('beta', 'gamma')]);
    const before = await runningSleepers(supervisor, ['alpha', 'beta', 'gamma']);

    process.kill(before.beta!, 'SIGKILL');
    const afterKill = await runningSleepers(supervisor, ['alpha', 'beta', 'gamma'], { beta: before.beta! });
    expect(supervisor.output()).toContain('[cos] beta exited (signal SIGKILL); restarting in 0.5s\n');
    expect(afterKill).toEqual({ ...before, beta: afterKill.beta });
    await eventually(async () => supervisor.output().includes(`[cos] beta restarted (pid ${afterKill.beta})\n`));

    process.kill(before.gamma!, 'SIGUSR2');
    const afterCrash = await runningSleepers(supervisor, ['alpha', 'beta', 'gamma'], { gamma: before.gamma! });
    expect(supervisor.output()).toContain('[cos] gamma exited (code 1); restarting in 0.5s\n');
    expect(afterCrash).toEqual({ ...afterKill, gamma: afterCrash.gamma });

    // Killed again soon after its restart: a quick exit in a row, so the wait doubles.
    process.kill(afterKill.beta!, 'SIGKILL');
    await eventually(async () => supervisor.output().includes('[cos] beta exited (signal SIGKILL); restarting in 1s\n'));

    supervisor.child.kill('SIGTERM');
    expect(await supervisor.exited).toBe(0);
  });

  it('stops everything and exits 1, naming the process and its last exit, when a child crash-loops', async () => {
    const policy = { initialDelayMs: 50, maxDelayMs: 200, stableAfterMs: 30_000, crashLoopExits: 5, crashLoopWindowMs: 60_000 };
    const supervisor = host([sleepers('steady'), [{ name: 'flaky', code: 'process.exit(3)' }]], policy);

    expect(await supervisor.exited).toBe(1);
    const output = supervisor.output();
    const steady = Number(/steady running as (\d+)/.exec(output)?.[1]);
    expect(output).toContain('[cos] flaky exited 5 times within 60s (last: code 3); not restarting it, stopping everything\n');
    expect(output.match(/\[cos\] flaky exited \(code 3\); restarting in/g)).toHaveLength(4);
    expect(output).toContain('steady got SIGTERM');
    expect(output).toContain('[cos] stopped\n');
    expect(alive(steady)).toBe(false);
  });

  it('on SIGTERM stops the last group first, then the first, restarts nothing and exits 0', async () => {
    const supervisor = host([sleepers('database'), sleepers('app-1', 'app-2')]);
    const pids = await runningSleepers(supervisor, ['database', 'app-1', 'app-2']);

    supervisor.child.kill('SIGTERM');
    expect(await supervisor.exited).toBe(0);
    const output = supervisor.output();
    // Each exits 1 a moment after its SIGTERM: the database gets its own only after both apps have exited.
    expect(output.indexOf('database got SIGTERM')).toBeGreaterThan(output.indexOf('app-1 got SIGTERM'));
    expect(output.indexOf('database got SIGTERM')).toBeGreaterThan(output.indexOf('app-2 got SIGTERM'));
    expect(output).not.toContain('restarting');
    expect(Object.values(pids).filter(alive)).toEqual([]);
  });
});

describe('the Postgres and Redis that npm start starts', () => {
  let dir: string;
  let services: LocalServices | undefined;
  let supervisor: Supervisor | undefined;

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'cos-supervised-'));
    chmodSync(dir, 0o755); // the postgres user must reach its data folder inside
  });
  afterAll(async () => {
    await supervisor?.stop();
    await services?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('are started again on the same port and data after a SIGKILL', async () => {
    services = await startLocalServices(dir, { durable: false });
    const started = services;
    const lines: string[] = [];
    supervisor = new Supervisor({ log: (line) => lines.push(line), onGiveUp: ({ message }) => lines.push(message) });
    await supervisor.start(serviceSpecs(started));

    const pg = new Client({ connectionString: started.databaseUrl });
    await pg.connect();
    await pg.query('create table kept (id int); insert into kept values (42)');
    // Its own statement, after the commit: this Postgres commits asynchronously (fsync off), and a
    // checkpoint writes the commit out before the kill.
    await pg.query('checkpoint');
    await pg.end();
    const redis = new Redis(started.redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
    await redis.connect();
    await redis.set('kept', 'yes');
    redis.disconnect();

    const postgresPid = supervisor.pid('postgres')!;
    const redisPid = supervisor.pid('redis')!;
    process.kill(postgresPid, 'SIGKILL');
    process.kill(redisPid, 'SIGKILL');

    await eventually(async () => {
      const newPid = supervisor!.pid('postgres');
      return newPid && newPid !== postgresPid && lines.includes(`postgres restarted (pid ${newPid})`);
    }, 30_000);
    await eventually(async () => {
      const newPid = supervisor!.pid('redis');
      return newPid && newPid !== redisPid && lines.includes(`redis restarted (pid ${newPid})`);
    }, 30_000);
    expect(lines).toEqual(
      expect.arrayContaining(['postgres exited (signal SIGKILL); restarting in 0.5s', 'redis exited (signal SIGKILL); restarting in 0.5s']),
    );

    const pgAgain = new Client({ connectionString: started.databaseUrl });
    await pgAgain.connect();
    try {
      expect((await pgAgain.query('select id from kept')).rows).toEqual([{ id: 42 }]);
    } finally {
      await pgAgain.end();
    }
    const redisAgain = new Redis(started.redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
    await redisAgain.connect();
    try {
      expect(await redisAgain.get('kept')).toBe('yes');
    } finally {
      redisAgain.disconnect();
    }

    const last = [supervisor.pid('postgres')!, supervisor.pid('redis')!];
    await supervisor.stop();
    expect(last.filter(alive)).toEqual([]);
  });
});

describe('npm start', () => {
  let env: TestEnv;
  let project: string;

  beforeAll(async () => {
    env = await createTestEnv();
    // A copy of the built service in a folder of its own: npm start keeps its state (.cos/: the
    // demo key, runtime.env) beside package.json, and must not overwrite this checkout's.
    project = mkdtempSync(path.join(os.tmpdir(), 'cos-start-'));
    cpSync(path.join(ROOT, 'dist'), path.join(project, 'dist'), { recursive: true });
    copyFileSync(path.join(ROOT, 'package.json'), path.join(project, 'package.json'));
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(project, 'node_modules'));
    mkdirSync(path.join(project, 'dashboard'));
    symlinkSync(path.join(ROOT, 'dashboard/assets'), path.join(project, 'dashboard/assets'));
  });
  afterAll(async () => {
    await env.close();
    rmSync(project, { recursive: true, force: true });
  });

  it('restarts a worker killed with SIGKILL while the API keeps answering, and stops everything on SIGTERM', async () => {
    const port = await freePort();
    const dashboardPort = await freePort();
    const start = run(
      [path.join(project, 'dist/scripts/start.js')],
      // HOST empty counts as unset: the default, whatever the shell running the tests has.
      env.processEnv({ PORT: String(port), DASHBOARD_PORT: String(dashboardPort), METRICS_PORT: '0', HOST: '' }),
    );
    stillRunning.add(start);
    const pidOf = (script: string) => childrenOf(start.child.pid!).find((pid) => commandLine(pid).at(-1)?.endsWith(script));
    await eventually(async () => start.output().includes('[cos] API:'), 45_000);
    const api = pidOf('dist/api/main.js')!;
    const dashboard = pidOf('dist/dashboard/main.js')!;
    const worker = pidOf('dist/worker/main.js')!;
    expect([api, dashboard, worker].every(Boolean)).toBe(true);
    // This machine only: 127.0.0.2 is this machine too on Linux, but not the address listened on.
    expect(start.output()).toContain('[cos] Listening on 127.0.0.1 only');
    for (const listening of [port, dashboardPort])
      await expect(fetch(`http://127.0.0.2:${listening}/healthz`)).rejects.toThrow('fetch failed');

    process.kill(worker, 'SIGKILL');
    const restarted = await eventually(async () => {
      const pid = pidOf('dist/worker/main.js');
      return pid && pid !== worker ? pid : null;
    });
    expect(start.output()).toContain('[cos] worker exited (signal SIGKILL); restarting in 0.5s\n');
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${dashboardPort}/healthz`)).status).toBe(200);
    expect([pidOf('dist/api/main.js'), pidOf('dist/dashboard/main.js')]).toEqual([api, dashboard]);

    start.child.kill('SIGTERM');
    expect(await start.exited).toBe(0);
    expect(start.output()).toContain('[cos] stopped\n');
    expect([api, dashboard, restarted].filter(alive)).toEqual([]);
  });
});
