import { CosError } from './errors';
import { nodeHttpFetch } from './node-http';
import type { RateLimit } from './rate-limit';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry';
import { Transport, type FetchLike, type RequestOptions, type ResponseInfo, type RetryInfo } from './transport';
import type {
  ContextRequest,
  ContextResponse,
  ListVersionsOptions,
  OutcomeRequest,
  OutcomeResponse,
  Profile,
  ProfileUpdate,
  ProfileVersion,
  VersionPage,
} from './types';
import { SDK_VERSION } from './version';

/**
 * Every option but `apiKey` may be left out or given as `undefined` (a value read from an
 * optional setting): both mean its default.
 */
export interface CosClientOptions {
  /** `cos_sk_test_…` or `cos_sk_live_…`. */
  apiKey: string;
  /** Default `http://localhost:3000`. */
  baseUrl?: string | undefined;
  /** Milliseconds each attempt may take; default 10,000. */
  timeout?: number | undefined;
  /** Retries after the first attempt; default 10. */
  maxRetries?: number | undefined;
  /** Backoff tuning in milliseconds (see RetryPolicy). */
  retry?: { [K in Exclude<keyof RetryPolicy, 'maxRetries'>]?: number | undefined } | undefined;
  /**
   * Default: Node's http/https modules, which send every user id as it is; where they do not
   * exist, the global `fetch`. Through a `fetch` (this one or the global), the user ids `.` and
   * `..` are refused without sending: fetch would resolve them as path steps.
   */
  fetch?: FetchLike | undefined;
  /** Your application's name and version, sent before the SDK's own in User-Agent. */
  userAgent?: string | undefined;
  /** Called for every HTTP answer (rate-limit state, X-Request-Id, status). */
  onResponse?: ((info: ResponseInfo) => void) | undefined;
  /** Called before every retry with the failure and the wait. */
  onRetry?: ((info: RetryInfo) => void) | undefined;
}

export const DEFAULT_BASE_URL = 'http://localhost:3000';
export const DEFAULT_TIMEOUT_MS = 10_000;

/** A client for the Context and Outcome Service's /v1 API. */
export class CosClient {
  private readonly transport: Transport;
  /** Whether the path reaches the service as written: false through a WHATWG fetch, which resolves `.` and `..` segments. */
  private readonly verbatimPaths: boolean;

  constructor(options: CosClientOptions) {
    if (!options.apiKey) throw new TypeError('CosClient: apiKey is required');
    const baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    if (!isHttpUrl(baseUrl))
      throw new TypeError(`CosClient: baseUrl must be an absolute http: or https: URL, not ${JSON.stringify(baseUrl)}`);
    const nodeFetch = options.fetch ? undefined : nodeHttpFetch();
    if (!options.fetch && !nodeFetch && typeof globalThis.fetch !== 'function')
      throw new TypeError('CosClient: neither node:http nor a global fetch here; pass options.fetch');
    this.verbatimPaths = nodeFetch !== undefined;
    this.transport = new Transport({
      apiKey: options.apiKey,
      baseUrl,
      timeout: options.timeout ?? DEFAULT_TIMEOUT_MS,
      retry: retryPolicy(options),
      // Called through a closure: some runtimes refuse a `fetch` invoked as another object's method.
      fetch: options.fetch ?? nodeFetch ?? ((url, init) => globalThis.fetch(url, init)),
      userAgent: [options.userAgent, `cos-sdk/${SDK_VERSION}`].filter(Boolean).join(' '),
      onResponse: options.onResponse,
      onRetry: options.onRetry,
    });
  }

  /** Rate-limit state from the most recent answer that carried one (live keys only). */
  get lastRateLimit(): RateLimit | undefined {
    return this.transport.lastRateLimit;
  }

  /** POST /v1/context: how to present a task to this user. */
  context(request: ContextRequest, options?: RequestOptions): Promise<ContextResponse> {
    return this.transport.send({ method: 'POST', path: '/v1/context', body: request }, options);
  }

  /** POST /v1/outcome: what happened; queued and applied once, however often it is posted. */
  outcome(request: OutcomeRequest, options?: RequestOptions): Promise<OutcomeResponse> {
    return this.transport.send({ method: 'POST', path: '/v1/outcome', body: request }, options);
  }

  /** GET /v1/profile/:userId; CosError USER_NOT_FOUND when the user has no profile. */
  async getProfile(userId: string, options?: RequestOptions): Promise<Profile> {
    return this.transport.send({ method: 'GET', path: this.profilePath(userId) }, options);
  }

  /** PUT /v1/profile/:userId: pin (value) or unpin (null) dimensions; creates the profile if missing. */
  async updateProfile(userId: string, update: ProfileUpdate, options?: RequestOptions): Promise<Profile> {
    return this.transport.send({ method: 'PUT', path: this.profilePath(userId), body: update }, options);
  }

  /** DELETE /v1/profile/:userId: erases the user's profile, history, decisions and outcomes; idempotent. */
  async deleteProfile(userId: string, options?: RequestOptions): Promise<void> {
    await this.transport.send<undefined>({ method: 'DELETE', path: this.profilePath(userId) }, options);
  }

  /** GET /v1/profile/:userId/versions: one page of the history, newest first. */
  async listVersions(userId: string, page: ListVersionsOptions = {}, options?: RequestOptions): Promise<VersionPage> {
    const query = new URLSearchParams();
    if (page.limit !== undefined) query.set('limit', String(page.limit));
    if (page.before !== undefined) query.set('before', String(page.before));
    return this.transport.send({ method: 'GET', path: `${this.profilePath(userId)}/versions`, query }, options);
  }

  /** Every version of the history, newest first, fetching pages of `pageSize` as it goes. */
  async *iterateVersions(userId: string, pageSize?: number, options?: RequestOptions): AsyncGenerator<ProfileVersion, void, undefined> {
    let before: string | undefined;
    for (;;) {
      const page = await this.listVersions(userId, { limit: pageSize, before }, options);
      yield* page.data;
      const last = page.data[page.data.length - 1];
      if (!page.hasMore || !last) return;
      before = last.profileVersion;
    }
  }

  /**
   * The profile path of `userId`, its one segment percent-encoded, dots included (`%2E`), so no
   * id reads as a path step or reaches another user's path. Throws INVALID_USER_ID, without
   * sending, for an id no path can carry: empty, with an unpaired surrogate (no UTF-8 form), or
   * `.` and `..` through a fetch, which removes such segments even percent-encoded.
   */
  private profilePath(userId: string): string {
    if (userId === '') throw invalidUserId('must not be empty');
    if (!this.verbatimPaths && (userId === '.' || userId === '..'))
      throw invalidUserId(
        `"${userId}" cannot be sent through fetch, which resolves it as a path step and would reach another path; ` +
          'use the default transport (node:http)',
      );
    let segment: string;
    try {
      segment = encodeURIComponent(userId);
    } catch {
      throw invalidUserId('must not contain unpaired surrogates');
    }
    return `/v1/profile/${segment.replace(/\./g, '%2E')}`;
  }
}

function isHttpUrl(url: string): boolean {
  try {
    new URL(url);
  } catch {
    return false;
  }
  return /^https?:\/\/[^/?#]/i.test(url);
}

/**
 * The service's own code for an unusable userId, with status 0 and no attempt: the call was
 * refused here and never sent.
 */
function invalidUserId(reason: string): CosError {
  const message = `userId ${reason}`;
  return new CosError({
    code: 'INVALID_USER_ID',
    message,
    statusCode: 0,
    details: { fields: [{ field: 'userId', message }] },
    attempts: 0,
  });
}

/** The defaults, overridden by the values given: an `undefined` one keeps its default. */
function retryPolicy(options: CosClientOptions): RetryPolicy {
  const given = Object.entries({ ...options.retry, maxRetries: options.maxRetries }).filter(([, value]) => value !== undefined);
  return { ...DEFAULT_RETRY_POLICY, ...Object.fromEntries(given) };
}
