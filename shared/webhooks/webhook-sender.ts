import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { ResolvedAddress } from './address-guard';

/** What one attempt came to: a 2xx is a success; anything else, a time-out or no answer, a failure. */
export interface AttemptResult {
  ok: boolean;
  /** The receiver's status code; null when none came (refused, timed out, no connection). */
  status: number | null;
  latencyMs: number;
  /** Why it failed, in a sentence (no secret, no body of the receiver's). */
  error: string | null;
}

export interface Attempt {
  url: URL;
  /** The address the guard checked: the connection goes there and nowhere else. */
  address: ResolvedAddress;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  clock?: () => number;
}

/** Drained and dropped: a receiver's answer is not kept, only its status. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * POSTs one signed delivery. The socket's lookup answers with the checked address alone (Host
 * and TLS SNI stay the URL's host name); redirects are not followed (a 3xx is a failure); the
 * whole exchange is bounded by `timeoutMs`. Never throws: every outcome is an AttemptResult.
 */
export function sendWebhook(attempt: Attempt): Promise<AttemptResult> {
  const clock = attempt.clock ?? Date.now;
  const started = clock();
  const pinned: LookupFunction = (_hostname, options, callback) => {
    const { address, family } = attempt.address;
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const transport = attempt.url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<AttemptResult, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, latencyMs: Math.max(0, clock() - started) });
    };
    const request = transport.request(attempt.url, {
      method: 'POST',
      headers: { ...attempt.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(attempt.body).toString() },
      lookup: pinned,
      // A connection of its own: a pooled one may have been opened to another address.
      agent: false,
    });
    const timer = setTimeout(() => {
      request.destroy();
      finish({ ok: false, status: null, error: `no answer within ${attempt.timeoutMs} ms` });
    }, attempt.timeoutMs);
    request.on('error', (error) => finish({ ok: false, status: null, error: `request failed: ${error.message}` }));
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      let received = 0;
      response.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > MAX_RESPONSE_BYTES) response.destroy();
      });
      const done = () => {
        const ok = status >= 200 && status < 300;
        const error = ok ? null : status >= 300 && status < 400 ? `redirect (${status}) not followed` : `answered ${status}`;
        finish({ ok, status, error });
      };
      response.on('end', done);
      response.on('close', done);
      response.on('error', done);
    });
    request.end(attempt.body);
  });
}
