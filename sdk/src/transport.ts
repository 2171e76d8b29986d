import { CosConnectionError, CosError } from './errors';
import { readRateLimit, type RateLimit } from './rate-limit';
import { errorFromResponse, successBody, type Received } from './response';
import { retryDelay, sleep, type RetryPolicy } from './retry';
import { randomUuid } from './uuid';

/** The subset of `fetch` the client uses; inject one to observe or alter its requests. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** Per-call overrides of the client's options; `undefined` means not given. */
export interface RequestOptions {
  /** Aborts the call, retries and waits included; the promise rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
  /** Milliseconds each attempt may take, reading the answer included. */
  timeout?: number | undefined;
  maxRetries?: number | undefined;
  /**
   * The `Idempotency-Key` of a POST (`context`, `outcome`), sent with every attempt of the call;
   * by default a new random UUID per call. Visible ASCII characters, no spaces. Reuse one to
   * repeat a call later as the same request. The other methods are idempotent by themselves and
   * send none.
   */
  idempotencyKey?: string | undefined;
  /**
   * The `X-Request-Id` sent with every attempt of the call; by default a new UUID per call.
   * 1–128 characters of `[A-Za-z0-9._-]` (the service replaces any other).
   */
  requestId?: string | undefined;
  /**
   * More headers for every attempt. Those the client sets itself (`Authorization`,
   * `Content-Type`, `Content-Length`, `Accept`, `User-Agent`, `X-Request-Id`, `Idempotency-Key`,
   * `Host`, `Connection`, `Transfer-Encoding`) cannot be replaced here: the call rejects with a
   * TypeError before sending.
   */
  headers?: Record<string, string> | undefined;
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
  /** The `Idempotency-Key` sent (POST calls). */
  idempotencyKey?: string | undefined;
  /**
   * True when the service answered with the stored answer of an earlier request with the same
   * `Idempotency-Key` (`Idempotent-Replayed: true`) instead of running it again.
   */
  replayed: boolean;
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
 * service's logs show them together, and a POST's attempts the same `Idempotency-Key`, so the
 * service runs it at most once however many of them reach it.
 */
export class Transport {
  /** From the most recent answer that carried `X-RateLimit-*` headers (live keys). */
  lastRateLimit?: RateLimit;

  constructor(private readonly config: TransportConfig) {}

  async send<T>(call: Call, options: RequestOptions = {}): Promise<T> {
    const policy = { ...this.config.retry, maxRetries: options.maxRetries ?? this.config.retry.maxRetries };
    const exchange = this.exchange(call, options);
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      try {
        return successBody<T>(await this.attempt(call, attempt, exchange, options));
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
  private async attempt(call: Call, attempt: number, exchange: Exchange, options: RequestOptions): Promise<Received> {
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
        headers: exchange.headers,
        body: exchange.body,
        signal: controller.signal,
      });
      text = await response.text();
    } catch (cause) {
      if (signal?.aborted) throw signal.reason;
      const message = timedOut
        ? `No answer from ${this.config.baseUrl} within ${timeout} ms`
        : `Could not reach ${this.config.baseUrl}: ${describe(cause)}`;
      throw new CosConnectionError(message, { timedOut, attempts: attempt, cause, idempotencyKey: exchange.idempotencyKey });
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
      idempotencyKey: exchange.idempotencyKey,
    };
    if (received.rateLimit) this.lastRateLimit = received.rateLimit;
    const { statusCode, requestId: answerId, rateLimit, idempotencyKey } = received;
    const replayed = response.headers.get('idempotent-replayed')?.trim().toLowerCase() === 'true';
    this.config.onResponse?.({
      method: call.method,
      path: call.path,
      statusCode,
      requestId: answerId,
      rateLimit,
      attempt,
      idempotencyKey,
      replayed,
    });
    if (!response.ok) throw errorFromResponse(received);
    return received;
  }

  private url(call: Call): string {
    const query = call.query?.toString();
    return `${this.config.baseUrl}${call.path}${query ? `?${query}` : ''}`;
  }

  /** What every attempt of the call sends; throws TypeError, before anything is sent, for options no attempt could send. */
  private exchange(call: Call, options: RequestOptions): Exchange {
    const requestId = options.requestId ?? randomUuid();
    if (!REQUEST_ID.test(requestId))
      throw new TypeError(`requestId must be 1–128 characters of [A-Za-z0-9._-], not ${JSON.stringify(requestId)}`);
    const idempotencyKey = call.method === 'POST' ? (options.idempotencyKey ?? randomUuid()) : undefined;
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey))
      throw new TypeError(`idempotencyKey must be 1 to 255 visible ASCII characters without spaces, not ${JSON.stringify(idempotencyKey)}`);
    const extra = options.headers ?? {};
    for (const name of Object.keys(extra)) {
      const managed = MANAGED_HEADERS.get(name.toLowerCase());
      if (managed !== undefined) throw new TypeError(`headers: ${name} is set by the client (${managed})`);
    }
    // Headers refuses what no HTTP request can carry (a line break in a value, a space in a
    // name): a TypeError now, rather than every attempt failing as if the service were away.
    new Headers(extra);
    const headers: Record<string, string> = {
      ...extra,
      Authorization: `Bearer ${this.config.apiKey}`,
      Accept: 'application/json',
      'User-Agent': this.config.userAgent,
      ...(call.body === undefined ? {} : { 'Content-Type': 'application/json' }),
      'X-Request-Id': requestId,
      ...(idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey }),
    };
    // Serialized once: every attempt sends the same bytes under the key, even if the caller
    // changes the request object while the call waits to retry.
    const body = call.body === undefined ? null : JSON.stringify(call.body);
    return { headers, idempotencyKey, body };
  }
}

/** What every attempt of one call sends alike. */
interface Exchange {
  headers: Record<string, string>;
  idempotencyKey: string | undefined;
  body: string | null;
}

/** The X-Request-Id values the service keeps; it replaces any other with its own. */
const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** Headers the client sets, with where to set them instead; `headers` cannot replace them. */
const MANAGED_HEADERS = new Map([
  ['authorization', 'the apiKey option of the client'],
  ['content-type', 'always application/json'],
  ['content-length', 'from the body'],
  ['accept', 'always application/json'],
  ['user-agent', 'the userAgent option of the client, sent before cos-sdk/<version>'],
  ['x-request-id', 'the requestId option'],
  ['idempotency-key', 'the idempotencyKey option'],
  ['host', 'from baseUrl'],
  ['connection', 'by the transport'],
  ['transfer-encoding', 'by the transport'],
]);

/** fetch's own message ("fetch failed") hides the reason in its cause (e.g. "connect ECONNREFUSED …"). */
function describe(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  return cause.cause instanceof Error ? `${cause.message} (${cause.cause.message})` : cause.message;
}
