import type { ChildProcess } from 'node:child_process';

/**
 * Keeps a set of named processes running: one that exits on its own is started again after a
 * capped exponential backoff, and one that keeps crashing stops them all, since restarting it
 * forever would only hide a fault that needs a person. `npm start` runs its Postgres, Redis, api,
 * worker and dashboard under one (scripts/start.ts).
 */

export interface RestartPolicy {
  /** The wait before the first restart; it doubles with each quick exit in a row. */
  initialDelayMs: number;
  maxDelayMs: number;
  /** A run that lasted this long resets the backoff to `initialDelayMs`. */
  stableAfterMs: number;
  /** This many exits of one process within `crashLoopWindowMs` is a crash loop: no more restarts. */
  crashLoopExits: number;
  crashLoopWindowMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  initialDelayMs: 500,
  maxDelayMs: 10_000,
  stableAfterMs: 30_000,
  crashLoopExits: 5,
  crashLoopWindowMs: 60_000,
};

/** What the restart decision remembers about one process's exits. */
export interface CrashHistory {
  /** Times of its exits within the crash-loop window, oldest first. */
  exits: number[];
  /** Quick exits in a row: the backoff's exponent. */
  quickExits: number;
}

export const NO_CRASHES: CrashHistory = { exits: [], quickExits: 0 };

export type RestartDecision =
  { restart: true; delayMs: number; history: CrashHistory } | { restart: false; exitsInWindow: number; history: CrashHistory };

/** Whether, and after how long, to restart a process whose run from `startedAt` ended at `exitedAt`. */
export function decideRestart(
  history: CrashHistory,
  run: { startedAt: number; exitedAt: number },
  policy: RestartPolicy = DEFAULT_RESTART_POLICY,
): RestartDecision {
  const exits = [...history.exits.filter((at) => at > run.exitedAt - policy.crashLoopWindowMs), run.exitedAt];
  const quickExits = run.exitedAt - run.startedAt >= policy.stableAfterMs ? 0 : history.quickExits;
  const next = { exits, quickExits: quickExits + 1 };
  if (exits.length >= policy.crashLoopExits) return { restart: false, exitsInWindow: exits.length, history: next };
  return { restart: true, delayMs: Math.min(policy.initialDelayMs * 2 ** quickExits, policy.maxDelayMs), history: next };
}

/** How a run ended: an exit code, a signal, or a start that failed. */
export type Exit = { code: number | null; signal: NodeJS.Signals | null } | { error: string };

export function describeExit(exit: Exit): string {
  if ('error' in exit) return `failed to start: ${exit.error}`;
  return exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`;
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(1))}s`;

export interface ChildSpec {
  name: string;
  /** Starts a run; resolves once it is up. A rejection counts as an exit. */
  start(): Promise<ChildProcess> | ChildProcess;
  /** Stops the run and resolves once it has exited (default: SIGTERM, SIGKILL after 30 s). */
  stop?(child: ChildProcess): Promise<void>;
  /** A run started before supervision began, watched instead of starting one. */
  running?: ChildProcess;
}

export interface SupervisorOptions {
  policy?: RestartPolicy;
  log(line: string): void;
  /** A process crash-looped: the supervisor is stopping everything (`stop()` resolves once it has). */
  onGiveUp(failure: { name: string; exit: Exit; message: string }): void;
  now?: () => number;
}

interface Managed {
  spec: ChildSpec;
  child?: ChildProcess;
  startedAt: number;
  history: CrashHistory;
  timer?: NodeJS.Timeout;
  /** A start in progress, which a stop waits for (and then stops what it started). */
  starting?: Promise<void>;
}

/** Longer than a worker's drain time-out (20 s), so only a process that hangs is killed. */
const STOP_GRACE_MS = 30_000;

function terminate(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM', graceMs = STOP_GRACE_MS): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill(signal);
  });
}

export class Supervisor {
  /** Groups started together, stopped last group first (the apps before the databases they use). */
  private readonly groups: Managed[][] = [];
  private stopping?: Promise<void>;
  private readonly policy: RestartPolicy;
  private readonly now: () => number;

  constructor(private readonly options: SupervisorOptions) {
    this.policy = options.policy ?? DEFAULT_RESTART_POLICY;
    this.now = options.now ?? Date.now;
  }

  /** Starts (or adopts) a group of processes and resolves once each has started or failed its first start. */
  async start(specs: ChildSpec[]): Promise<void> {
    if (this.stopping) return;
    const group = specs.map((spec): Managed => ({ spec, startedAt: this.now(), history: NO_CRASHES }));
    this.groups.push(group);
    await Promise.all(
      group.map((managed) => {
        if (managed.spec.running) {
          this.watch(managed, managed.spec.running);
          return undefined;
        }
        return this.launch(managed);
      }),
    );
  }

  /** The pid of a process's current run, if it is running. */
  pid(name: string): number | undefined {
    return this.groups.flat().find((managed) => managed.spec.name === name)?.child?.pid;
  }

  /** Stops every process, last group first, and restarts nothing from then on. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      for (const group of [...this.groups].reverse()) {
        await Promise.all(
          group.map(async (managed) => {
            clearTimeout(managed.timer);
            await managed.starting;
            const child = managed.child;
            if (child) await (managed.spec.stop ? managed.spec.stop(child) : terminate(child));
          }),
        );
      }
    })();
    return this.stopping;
  }

  private launch(managed: Managed): Promise<void> {
    managed.startedAt = this.now();
    managed.starting = (async () => {
      try {
        this.watch(managed, await managed.spec.start());
      } catch (error) {
        this.exited(managed, { error: error instanceof Error ? error.message : String(error) });
      } finally {
        managed.starting = undefined;
      }
    })();
    return managed.starting;
  }

  private watch(managed: Managed, child: ChildProcess): void {
    managed.child = child;
    let ended = false;
    const end = (exit: Exit) => {
      if (ended) return;
      ended = true;
      if (managed.child === child) managed.child = undefined;
      this.exited(managed, exit);
    };
    // A run that ended before we got to watch it (it died right after its readiness check).
    if (child.exitCode !== null || child.signalCode !== null) return end({ code: child.exitCode, signal: child.signalCode });
    child.once('exit', (code, signal) => end({ code, signal }));
    // A spawn that failed (no such command) emits no 'exit'.
    child.on('error', (error) => {
      if (child.pid === undefined) end({ error: error.message });
    });
  }

  private exited(managed: Managed, exit: Exit): void {
    if (this.stopping) return;
    const { name } = managed.spec;
    const decision = decideRestart(managed.history, { startedAt: managed.startedAt, exitedAt: this.now() }, this.policy);
    managed.history = decision.history;
    if (!decision.restart) {
      const message =
        `${name} exited ${decision.exitsInWindow} times within ${seconds(this.policy.crashLoopWindowMs)} ` +
        `(last: ${describeExit(exit)}); not restarting it, stopping everything`;
      void this.stop();
      this.options.onGiveUp({ name, exit, message });
      return;
    }
    this.options.log(`${name} exited (${describeExit(exit)}); restarting in ${seconds(decision.delayMs)}`);
    managed.timer = setTimeout(() => {
      managed.timer = undefined;
      if (this.stopping) return;
      void this.launch(managed).then(() => {
        if (managed.child && !this.stopping) this.options.log(`${name} restarted (pid ${managed.child.pid})`);
      });
    }, decision.delayMs);
  }
}
