import type { FetchLike } from '../../sdk/src';

export interface RecordedAttempt {
  method: string;
  url: string;
  /** The X-Request-Id the SDK sent: the same for every attempt of one call. */
  callId: string | null;
  /** Set when the service answered. */
  status?: number;
  headers?: Headers;
}

/**
 * The real `fetch`, recording every HTTP attempt the SDK makes, so tests count attempts and
 * read each answer's headers instead of timing the client.
 */
export function recordingFetch(): { fetch: FetchLike; attempts: RecordedAttempt[] } {
  const attempts: RecordedAttempt[] = [];
  const recorded: FetchLike = async (url, init) => {
    const attempt: RecordedAttempt = { method: init.method ?? 'GET', url, callId: new Headers(init.headers).get('x-request-id') };
    attempts.push(attempt);
    const response = await fetch(url, init);
    attempt.status = response.status;
    attempt.headers = response.headers;
    return response;
  };
  return { fetch: recorded, attempts };
}
