import type { Response } from 'express';
import type { TrafficRecorder } from '../../shared/traffic/traffic-recorder';
import { UNMATCHED_ROUTE, type RequestObserver } from './metrics.middleware';

/**
 * The key a request presented, once authentication has matched it to a stored key — valid or
 * not: a 401 of a revoked, deleted or rotated-out key is recorded against that key, so a
 * deployment still using it shows up (docs/adr/0012-traffic-recording.md).
 */
export function notePresentedKey(res: Response, keyId: string): void {
  res.locals.presentedKeyId = keyId;
}

/**
 * Records each finished request of a known key in the dashboard's traffic counters. Without
 * trusted proxies the client is the socket's peer: read directly, not through `req.ip`, which
 * parses the forwarding headers on every call.
 */
export function trafficObserver(recorder: TrafficRecorder, trustsProxies: boolean): RequestObserver {
  return (res, ms) => {
    const keyId = res.locals.presentedKeyId as string | undefined;
    if (!keyId) return;
    recorder.record({
      keyId,
      endpoint: (res.locals.route as string | undefined) ?? UNMATCHED_ROUTE,
      status: res.statusCode,
      ms,
      address: trustsProxies ? res.req.ip : res.req.socket.remoteAddress,
    });
  };
}
