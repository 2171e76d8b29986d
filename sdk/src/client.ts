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
  /** Default: the global `fetch` (Node ≥ 18). */
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

  constructor(options: CosClientOptions) {
    if (!options.apiKey) throw new TypeError('CosClient: apiKey is required');
    if (!options.fetch && typeof globalThis.fetch !== 'function')
      throw new TypeError('CosClient: no global fetch (Node ≥ 18 has one); pass options.fetch');
    this.transport = new Transport({
      apiKey: options.apiKey,
      baseUrl: (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, ''),
      timeout: options.timeout ?? DEFAULT_TIMEOUT_MS,
      retry: retryPolicy(options),
      // Called through a closure: some runtimes refuse a `fetch` invoked as another object's method.
      fetch: options.fetch ?? ((url, init) => globalThis.fetch(url, init)),
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
  getProfile(userId: string, options?: RequestOptions): Promise<Profile> {
    return this.transport.send({ method: 'GET', path: profilePath(userId) }, options);
  }

  /** PUT /v1/profile/:userId: pin (value) or unpin (null) dimensions; creates the profile if missing. */
  updateProfile(userId: string, update: ProfileUpdate, options?: RequestOptions): Promise<Profile> {
    return this.transport.send({ method: 'PUT', path: profilePath(userId), body: update }, options);
  }

  /** DELETE /v1/profile/:userId: erases the user's profile, history, decisions and outcomes; idempotent. */
  async deleteProfile(userId: string, options?: RequestOptions): Promise<void> {
    await this.transport.send<undefined>({ method: 'DELETE', path: profilePath(userId) }, options);
  }

  /** GET /v1/profile/:userId/versions: one page of the history, newest first. */
  listVersions(userId: string, page: ListVersionsOptions = {}, options?: RequestOptions): Promise<VersionPage> {
    const query = new URLSearchParams();
    if (page.limit !== undefined) query.set('limit', String(page.limit));
    if (page.before !== undefined) query.set('before', String(page.before));
    return this.transport.send({ method: 'GET', path: `${profilePath(userId)}/versions`, query }, options);
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
}

/** The defaults, overridden by the values given: an `undefined` one keeps its default. */
function retryPolicy(options: CosClientOptions): RetryPolicy {
  const given = Object.entries({ ...options.retry, maxRetries: options.maxRetries }).filter(([, value]) => value !== undefined);
  return { ...DEFAULT_RETRY_POLICY, ...Object.fromEntries(given) };
}

const profilePath = (userId: string) => `/v1/profile/${encodeURIComponent(userId)}`;
