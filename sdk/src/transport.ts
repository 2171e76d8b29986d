import { CosConnectionError, CosError } from './errors';
import { readRateLimit, type RateLimit } from './rate-limit';
import { errorFromResponse, successBody, type Received } from './response';
import { retryDelay, sleep, type RetryPolicy } from './retry';

/** The subset of `fetch` the client uses; inject one to observe or alter its requests. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** Per-call overrides of the client's options. */
export interface RequestOptions {
  /** Aborts the call, retries and waits included; the promise rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
  /** Milliseconds each attempt may take, reading the answer included. */
  timeout?: number | undefined;
  maxRetries?: number | undefined;
}

/** Reported for every HTTP answer, error answers and answers that are retried included. */
export interface ResponseInfo {
  method: Method;
  path: string;
  statusCode: number;
  /** `X-Request-Id` of the answer. */
  requestId?: string | undefined;
  rateLimit?: RateLimit | undefined;
  /** 1 for the first attempt of a call. */
  attempt: number;
}

/** Reported before each retry. */
export interface RetryInfo {
  method: Method;
  path: string;
  /** The attempt that failed (1 for the first). */
  attempt: number;
  /** Milliseconds the client waits before the next attempt. */
  delay: number;
  error: CosError | CosConnectionError;
}

export interface TransportConfig {
  apiKey: string;
  baseUrl: string;
  timeout: number;
  retry: RetryPolicy;
  fetch: FetchLike;
  /** The full User-Agent header. */
  userAgent: string;
  onResponse?: ((info: ResponseInfo) => void) | undefined;
  onRetry?: ((info: RetryInfo) => void) | undefined;
}

export interface Call {
  method: Method;
  path: string;
  query?: URLSearchParams;
  body?: object;
}

/**
 * Sends calls with retries. All attempts of one call carry the same `X-Request-Id`, so the
 * service's logs show them together.
 */
export class Transport {
  /** From the most recent answer that carried `X-RateLimit-*` headers (live keys). */
  lastRateLimit?: RateLimit;

  constructor(private readonly config: TransportConfig) {}

  async send<T>(call: Call, options: RequestOptions = {}): Promise<T> {
    const policy = { ...this.config.retry, maxRetries: options.maxRetries ?? this.config.retry.maxRetries };
    const requestId = newRequestId();
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      try {
        return successBody<T>(await this.attempt(call, attempt, requestId, options));
      } catch (error) {
        if (!(error instanceof CosError || error instanceof CosConnectionError)) throw error;
        const delay = retryDelay(error, attempt, policy, Math.random, Date.now() - started);
        if (delay === null) throw error;
        this.config.onRetry?.({ method: call.method, path: call.path, attempt, delay, error });
        await sleep(delay, options.signal);
      }
    }
  }

  /** One HTTP exchange; resolves with a success, throws CosError or CosConnectionError otherwise. */
  private async attempt(call: Call, attempt: number, requestId: string | undefined, options: RequestOptions): Promise<Received> {
    const { signal } = options;
    if (signal?.aborted) throw signal.reason;
    const timeout = options.timeout ?? this.config.timeout;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeout);
    const onAbort = () => controller.abort(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    let response: Response;
    let text: string;
    try {
      response = await this.config.fetch(this.url(call), {
        method: call.method,
        headers: this.headers(call, requestId),
        body: call.body === undefined ? null : JSON.stringify(call.body),
        signal: controller.signal,
      });
      text = await response.text();
    } catch (cause) {
      if (signal?.aborted) throw signal.reason;
      const message = timedOut
        ? `No answer from ${this.config.baseUrl} within ${timeout} ms`
        : `Could not reach ${this.config.baseUrl}: ${describe(cause)}`;
      throw new CosConnectionError(message, { timedOut, attempts: attempt, cause });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
    const received: Received = {
      statusCode: response.status,
      headers: response.headers,
      text,
      requestId: response.headers.get('x-request-id') ?? undefined,
      rateLimit: readRateLimit(response.headers),
      attempt,
    };
    if (received.rateLimit) this.lastRateLimit = received.rateLimit;
    const { statusCode, requestId: answerId, rateLimit } = received;
    this.config.onResponse?.({ method: call.method, path: call.path, statusCode, requestId: answerId, rateLimit, attempt });
    if (!response.ok) throw errorFromResponse(received);
    return received;
  }

  private url(call: Call): string {
    const query = call.query?.toString();
    return `${this.config.baseUrl}${call.path}${query ? `?${query}` : ''}`;
  }

  private headers(call: Call, requestId: string | undefined): Record<string, string> {
    return {
      Authorization: `Bearer ${this.config.apiKey}`,
      Accept: 'application/json',
      'User-Agent': this.config.userAgent,
      ...(call.body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...(requestId ? { 'X-Request-Id': requestId } : {}),
    };
  }
}

/** A UUID where the runtime has Web Crypto (Node ≥ 19, browsers); else the service assigns one per attempt. */
function newRequestId(): string | undefined {
  return globalThis.crypto?.randomUUID?.();
}

/** fetch's own message ("fetch failed") hides the reason in its cause (e.g. "connect ECONNREFUSED …"). */
function describe(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  return cause.cause instanceof Error ? `${cause.message} (${cause.cause.message})` : cause.message;
}
