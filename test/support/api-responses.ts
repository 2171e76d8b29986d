import type { RequestListener } from 'node:http';
import { openApiMismatches, type Exchange } from './openapi';

/**
 * The APIs a test file talks to and what they answered. Every response from one of them is
 * checked against the OpenAPI document (openapi.ts); openapi-checks.ts, a setup file of every
 * jest project, fails the test that got one the document does not describe. The harness, the
 * spawned API processes and the helpers that reach them register them here; a dashboard or a
 * worker's ops listener is never registered (the document is the API's), nor can a test on a raw
 * socket be checked (it sends what is not HTTP on purpose, or reads the bytes itself, and
 * checks them with the error schemas).
 */
const listeners = new WeakSet<RequestListener>();
const origins = new Set<string>();

/** `listener` is the API's: responses to supertest requests against it are checked. */
export function apiListener<L extends RequestListener>(listener: L): L {
  listeners.add(listener);
  return listener;
}

/** The API answers at `url` (its origin): responses to requests there are checked. */
export function apiUrl(url: string): string {
  origins.add(new URL(url).origin);
  return url;
}

export const isApiListener = (listener: unknown): boolean => typeof listener === 'function' && listeners.has(listener as RequestListener);

export function isApiUrl(url: string): boolean {
  try {
    return origins.has(new URL(url).origin);
  } catch {
    return false;
  }
}

const received: Exchange[] = [];
const pending = new Set<Promise<unknown>>();

/**
 * One response of the API, checked against the document when the test ends: validating it now
 * would slow the test while it times or counts what the API does.
 */
export function checkApiExchange(exchange: Exchange): void {
  received.push(exchange);
}

/** A check that needs the body first (fetch reads it from a clone): awaited before the test ends. */
export function checkLater(check: Promise<unknown>): void {
  const tracked = check.catch(() => undefined).finally(() => pending.delete(tracked));
  pending.add(tracked);
}

/** How the responses received since the last call differ from the document, once their bodies are read (a few seconds at most). */
export async function takeMismatches(): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise((resolve) => (timer = setTimeout(resolve, 5000)));
  await Promise.race([Promise.allSettled([...pending]), late]);
  clearTimeout(timer);
  return received.splice(0).flatMap((exchange) => openApiMismatches(exchange));
}
