import { hash, randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Tenant } from '../../shared/domain/environment';
import { AppError } from '../../shared/errors/app-error';
import {
  IdempotencyKeyHeld,
  type IdempotencyRecord,
  type IdempotencyRecords,
  type KeyClaim,
} from '../../shared/idempotency/idempotency.repository';
import type { Logger } from '../../shared/logger/logger';
import { sendJson, sendJsonText } from '../http';
import { settleDeferredLimit } from '../middleware/rate-limit.middleware';
import { IDEMPOTENCY_KEY_PATTERN } from '../schemas/request.schemas';

/**
 * The request's Idempotency-Key, or undefined without one; a malformed key is a 400
 * (docs/API.md#idempotent-requests).
 */
export function idempotencyKeyOf(req: Request): string | undefined {
  const key = req.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key === 'string' && IDEMPOTENCY_KEY_PATTERN.test(key)) return key;
  throw new AppError('VALIDATION_ERROR', 'Invalid request: Idempotency-Key must be 1 to 255 visible ASCII characters (no spaces)', {
    fields: [{ field: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters (no spaces)' }],
  });
}

/** An idempotent POST: whose it is, its key, and what identifies the request. */
export interface IdempotentCall {
  tenant: Tenant;
  /** The user the request concerns: records live in the user's slot and go with the user's erasure. */
  userHash: string;
  key: string;
  /** The operation and its validated request: the same key with another of either is a 409. */
  operation: 'context' | 'outcome';
  request: object;
}

/** A response worth replaying: the success the request ended with. */
export interface Answer {
  status: number;
  body: unknown;
}

/**
 * Runs POSTs that carry an Idempotency-Key once per key and window: the first request holds a
 * lease while it runs, and its success is stored and replayed to every later request with the
 * same key and request; an error is not stored (the key is freed, a retry runs again). The
 * lease is taken by the request's first Redis call in its user's slot (`execute` passes the
 * claim on), not by a call of its own (docs/adr/0020-idempotency-keys.md).
 */
export class IdempotentPosts {
  constructor(
    private readonly deps: {
      records: IdempotencyRecords;
      /** How long a response is replayed. */
      windowMs: number;
      /** How long a request in flight holds its key: its deadline, so a crashed process frees it. */
      leaseMs: number;
      logger: Logger;
    },
  ) {}

  /**
   * Answers `res` with the stored response, a 409, or what `execute` returns (stored first).
   * `execute` must send `claim` with its first call in the user's slot, before any effect.
   */
  async answer(res: Response, call: IdempotentCall, execute: (claim: KeyClaim) => Promise<Answer>): Promise<void> {
    const { records, windowMs, leaseMs } = this.deps;
    const fingerprint = requestFingerprint(call.operation, call.request);
    const record = { tenant: call.tenant, userHash: call.userHash, keyDigest: keyDigest(call.key) };
    const claim = records.prepareClaim(record, { token: randomUUID(), fingerprint, leaseMs, windowMs, now: Date.now() });
    let answer: Answer;
    try {
      answer = await execute(claim);
    } catch (error) {
      if (error instanceof IdempotencyKeyHeld) return this.replay(res, error.record, fingerprint);
      if (claim.acquired) records.release(claim).catch((failure: unknown) => this.lost(failure));
      throw error;
    }
    if (!claim.acquired) throw new Error('an idempotent POST answered without claiming its key');
    // Stored before it is sent: a client that gets the answer and sends the key again is replayed, not told "in use".
    const responseText = JSON.stringify(answer.body);
    await records
      .complete(claim, { fingerprint, status: answer.status, responseText, windowMs })
      .catch((failure: unknown) => this.lost(failure));
    sendJsonText(res, answer.status, responseText);
  }

  /**
   * The answer to a request whose key is held: the stored response, or why not. A replay is
   * admitted like any request: a limit the route deferred to its profile read is settled first.
   */
  private async replay(res: Response, record: IdempotencyRecord, fingerprint: string): Promise<void> {
    if (record.fingerprint !== fingerprint) {
      throw new AppError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request');
    }
    if (record.state === 'in-flight') {
      throw new AppError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still in progress; retry shortly', undefined, {
        'Retry-After': '1',
      });
    }
    await settleDeferredLimit(res);
    res.setHeader('Idempotent-Replayed', 'true');
    sendJson(res, record.status, record.response);
  }

  /** The answer is sent anyway; the lease expires within the deadline and a retry runs again. */
  private lost(error: unknown): void {
    this.deps.logger.warn({ err: error }, 'idempotency record not written');
  }
}

/** 128 bits of SHA-256, base64url: a compact, fixed-size identity. */
function digestOf(text: string): string {
  return hash('sha256', text, 'base64url').slice(0, 22);
}

/** What a record is stored under: the key's digest (the client's key itself is not kept). */
export const keyDigest = (key: string): string => digestOf(key);

/** The identity of a request: its operation and its validated body, keys in any order. */
export const requestFingerprint = (operation: IdempotentCall['operation'], request: object): string =>
  digestOf(`${operation}\n${canonicalJson(request)}`);

/** JSON with object keys sorted at every level: the same request however its keys were ordered. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}
