import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';

/** Responses answered at their deadline (kept only as long as the response lives). */
const answeredAtDeadline = new WeakSet<ServerResponse>();

/**
 * Whether `res` was answered 503 at its deadline: whatever its handler does afterwards — an
 * answer, an error — is dropped by the error handlers.
 */
export const passedDeadline = (res: ServerResponse): boolean => answeredAtDeadline.has(res);

/**
 * The deadline of every request in flight (docs/adr/0018-deadlines.md). Each dependency call has
 * its own time-out, but a request may make several in turn; this bounds the whole: a request
 * not answered `deadlineMs` after it arrived is handed to `expire` (which answers 503), checked
 * every tenth of the deadline. One timer for all requests: a timer per request would cost the
 * hot path more than a map entry.
 */
export class RequestDeadlines<R extends ServerResponse = ServerResponse> {
  /** Requests by arrival, oldest first (a Map keeps insertion order). */
  private readonly open = new Map<R, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly deadlineMs: number,
    private readonly expire: (res: R) => void,
  ) {
    this.timer = setInterval(() => this.sweep(), Math.max(10, Math.floor(deadlineMs / 10)));
    this.timer.unref();
  }

  /** A request arrived (`at`: performance.now()). */
  start(res: R, at: number): void {
    this.open.set(res, at);
  }

  /** Its answer is sent. */
  end(res: R): void {
    this.open.delete(res);
  }

  /** Requests answered 503 at their deadline since the process started. */
  expired = 0;

  /** Requests not answered yet. */
  get size(): number {
    return this.open.size;
  }

  close(): void {
    clearInterval(this.timer);
    this.open.clear();
  }

  private sweep(): void {
    const due = performance.now() - this.deadlineMs;
    for (const [res, at] of this.open) {
      if (at > due) break;
      this.open.delete(res);
      // A client that went away needs no answer.
      if (res.headersSent || res.destroyed) continue;
      this.expired++;
      try {
        // The connection closes after this answer: a client still sending its body is freed too.
        res.setHeader('Connection', 'close');
        this.expire(res);
        answeredAtDeadline.add(res);
      } catch {
        // The answer could not be written (its socket failed meanwhile): nothing more to do for it.
        res.destroy();
      }
    }
  }
}
