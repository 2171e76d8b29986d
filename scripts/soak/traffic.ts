import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { HOST, sleep } from '../bench/processes';

/** What the soak's clients saw in one minute of the run. */
export interface MinuteStats {
  /** Responses by HTTP status. */
  statuses: Record<string, number>;
  /** Requests that got no answer (connection refused or reset, timeout). */
  errors: number;
  /** Milliseconds from sending to the end of each answered response. */
  latencies: number[];
}

export interface SoakKey {
  environment: 'live' | 'test';
  key: string;
}

export interface TrafficOptions {
  port: number;
  keys: SoakKey[];
  /** Concurrent clients, each a loop of context → outcome → sometimes a profile read or update. */
  clients: number;
  /** Pause between two rounds of a client. */
  thinkMs: number;
  /** Distinct users per key. */
  users: number;
  /** How long an unacknowledged outcome is retried after the traffic stops. */
  retryGraceMs: number;
}

interface Answer {
  status: number;
  body: Record<string, unknown> | undefined;
}

const COMPLEXITIES = ['low', 'medium', 'high'] as const;

/**
 * Mixed traffic of live and test keys against the API, as well-behaved clients send it: a
 * context call, usually its outcome (retried on 503, 409 IDEMPOTENCY_KEY_IN_USE or no answer
 * until it is acknowledged, as the API's contract asks), sometimes GET or PUT of the user's
 * profile. Every POST carries an Idempotency-Key, an outcome's the same in all its retries, as
 * the SDKs send them. Every outcome answered 202 is remembered, so the run can check each was
 * applied once.
 */
export class SoakTraffic {
  /** requestIds whose outcome was answered 202. */
  readonly accepted = new Set<string>();
  /** Outcomes refused for good (an answer other than 202, 503 or none). */
  readonly refusedOutcomes = new Map<number, number>();
  readonly minutes: MinuteStats[] = [];
  private stopping = false;
  private stoppedAt = Infinity;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  private readonly startedAt = performance.now();

  constructor(private readonly options: TrafficOptions) {}

  /** Runs until `stop`, then until the outcomes being retried are acknowledged or the grace ends. */
  async run(): Promise<void> {
    await Promise.all(Array.from({ length: this.options.clients }, (_, i) => this.client(i)));
    this.agent.destroy();
  }

  stop(): void {
    this.stopping = true;
    this.stoppedAt = performance.now();
  }

  private async client(index: number): Promise<void> {
    const { key, environment } = this.options.keys[index % this.options.keys.length]!;
    for (let round = 0; !this.stopping; round++) {
      const userId = `soak-${environment}-${Math.floor(Math.random() * this.options.users)}`;
      const complexity = COMPLEXITIES[round % COMPLEXITIES.length]!;
      const context = await this.call('POST', '/v1/context', key, { userId, task: 'Write the weekly report', complexity }, randomUUID());
      const requestId = context?.status === 200 ? context.body?.requestId : undefined;
      if (typeof requestId === 'string' && Math.random() < 0.9) {
        await this.deliverOutcome(key, requestId, { started: Math.random() < 0.7, satisfaction: Math.round(Math.random() * 4) / 4 });
      }
      const path = `/v1/profile/${encodeURIComponent(userId)}`;
      if (Math.random() < 0.3) await this.call('GET', path, key);
      if (Math.random() < 0.05) await this.call('PUT', path, key, { encouragementLevel: null });
      await sleep(this.options.thinkMs);
    }
  }

  /** Posts an outcome until it is acknowledged (202), refused for good, or the grace after stop ends. */
  private async deliverOutcome(key: string, requestId: string, signals: Record<string, unknown>): Promise<void> {
    const idempotencyKey = randomUUID();
    for (;;) {
      const answer = await this.call('POST', '/v1/outcome', key, { requestId, ...signals }, idempotencyKey);
      if (answer?.status === 202) {
        this.accepted.add(requestId);
        return;
      }
      const retry = answer === null || answer.status === 503 || (answer.status === 409 && errorCode(answer) === 'IDEMPOTENCY_KEY_IN_USE');
      if (!retry) {
        this.refusedOutcomes.set(answer.status, (this.refusedOutcomes.get(answer.status) ?? 0) + 1);
        return;
      }
      if (performance.now() - this.stoppedAt > this.options.retryGraceMs) return;
      await sleep(500);
    }
  }

  private minute(): MinuteStats {
    const index = Math.floor((performance.now() - this.startedAt) / 60_000);
    while (this.minutes.length <= index) this.minutes.push({ statuses: {}, errors: 0, latencies: [] });
    return this.minutes[index]!;
  }

  private call(method: string, path: string, key: string, body?: unknown, idempotencyKey?: string): Promise<Answer | null> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const sent = performance.now();
    return new Promise((settle) => {
      let settled = false;
      const resolve = (answer: Answer | null) => {
        if (settled) return;
        settled = true;
        if (!answer) this.minute().errors++;
        settle(answer);
      };
      const req = http.request(
        {
          host: HOST,
          port: this.options.port,
          method,
          path,
          agent: this.agent,
          timeout: 10_000,
          headers: {
            Authorization: `Bearer ${key}`,
            ...(payload === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) }),
            ...(idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey }),
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            const minute = this.minute();
            minute.latencies.push(performance.now() - sent);
            minute.statuses[res.statusCode!] = (minute.statuses[res.statusCode!] ?? 0) + 1;
            let parsed: Record<string, unknown> | undefined;
            try {
              parsed = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
            } catch {
              parsed = undefined;
            }
            resolve({ status: res.statusCode!, body: parsed });
          });
          res.on('error', () => resolve(null));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => resolve(null));
      req.end(payload);
    });
  }
}

/** The `error.code` of an error answer, if it has one. */
function errorCode(answer: Answer): unknown {
  const error = answer.body?.error;
  return error !== null && typeof error === 'object' ? (error as Record<string, unknown>).code : undefined;
}
