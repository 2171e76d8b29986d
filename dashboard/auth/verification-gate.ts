/**
 * A cap on password verifications running at once in this process. argon2id costs tens of ms
 * of CPU and 19 MiB each, so a flood of sign-ins from many addresses (each within its own
 * allowance) would otherwise take every core from the API on the same machine. Attempts beyond
 * the cap queue; past the queue's length or wait they are refused (429), never verified later.
 */
export interface VerificationGateOptions {
  /** Verifications at once. */
  concurrency: number;
  /** Attempts waiting for a turn; more are refused at once. */
  maxQueued: number;
  /** How long an attempt waits for a turn before it is refused. */
  maxWaitMs: number;
}

export const DEFAULT_VERIFICATION_GATE: VerificationGateOptions = { concurrency: 1, maxQueued: 16, maxWaitMs: 2000 };

export class VerificationBusyError extends Error {
  constructor() {
    super('too many sign-ins are being verified');
  }
}

export class VerificationGate {
  private running = 0;
  private readonly waiting: { start: () => void; timer: NodeJS.Timeout }[] = [];

  constructor(private readonly options: VerificationGateOptions = DEFAULT_VERIFICATION_GATE) {}

  /** Every turn taken and the queue full: an attempt now would be refused. */
  get saturated(): boolean {
    return this.running >= this.options.concurrency && this.waiting.length >= this.options.maxQueued;
  }

  /** Runs `verify` when a turn is free; rejects with VerificationBusyError when none comes in time. */
  async run<T>(verify: () => Promise<T>): Promise<T> {
    await this.turn();
    try {
      return await verify();
    } finally {
      this.running--;
      this.waiting.shift()?.start();
    }
  }

  private turn(): Promise<void> {
    if (this.running < this.options.concurrency) {
      this.running++;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.options.maxQueued) return Promise.reject(new VerificationBusyError());
    return new Promise<void>((resolve, reject) => {
      const entry = {
        start: () => {
          clearTimeout(entry.timer);
          this.running++;
          resolve();
        },
        timer: setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(entry), 1);
          reject(new VerificationBusyError());
        }, this.options.maxWaitMs),
      };
      this.waiting.push(entry);
    });
  }
}
