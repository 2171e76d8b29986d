import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Environment } from '../domain/environment';

/**
 * Signed request ids (docs/adr/0001-signed-request-ids.md). A requestId carries who it was
 * issued to and when, authenticated by an HMAC under the server secret, so POST /v1/outcome
 * can answer 404 (not issued to this tenant) and 410 (window closed) without reading storage.
 *
 * Layout (base64url): version(1) | env(1) | issuedAt ms (6) | nonce (12) | userHash (8) |
 * decision batch (8) | accountId (utf8), followed by a 16-byte truncated HMAC-SHA-256 over
 * "rid:" + the payload. The user is bound by a keyed hash (shared/keys/user-hash.ts), never in
 * clear. The decision batch names the job that carried the decision to the worker
 * (docs/adr/0010-group-commit.md). Version 2 ids, issued before decisions were batched, have
 * no batch field and are still accepted.
 */
const VERSION = 3;
const UNBATCHED_VERSION = 2;
const NONCE_BYTES = 12;
const USER_HASH_BYTES = 8;
const BATCH_BYTES = 8;
const MAC_BYTES = 16;
const USER_HASH_OFFSET = 1 + 1 + 6 + NONCE_BYTES;
const BATCH_OFFSET = USER_HASH_OFFSET + USER_HASH_BYTES;
const HEADER_BYTES = BATCH_OFFSET + BATCH_BYTES;
export const REQUEST_ID_PATTERN = /^req_[A-Za-z0-9_-]{40,200}$/;

export interface RequestIdClaims {
  accountId: string;
  environment: Environment;
  issuedAt: number;
  /** userHash(secret, tenant, userId): 16 hex characters. */
  userHash: string;
  /** The id of the decision batch job (16 hex characters); absent in version 2 ids. */
  decisionBatch?: string;
}

/** Random bytes drawn in blocks: one draw per request costs more than the id's HMAC. */
const NONCE_POOL_BYTES = NONCE_BYTES * 512;
let noncePool = Buffer.alloc(0);
let nonceOffset = 0;
function nextNonce(target: Buffer, offset: number): void {
  if (nonceOffset + NONCE_BYTES > noncePool.length) {
    noncePool = randomBytes(NONCE_POOL_BYTES);
    nonceOffset = 0;
  }
  noncePool.copy(target, offset, nonceOffset, nonceOffset + NONCE_BYTES);
  nonceOffset += NONCE_BYTES;
}

function mac(secret: string, payload: Buffer): Buffer {
  return createHmac('sha256', secret).update('rid:').update(payload).digest().subarray(0, MAC_BYTES);
}

export function issueRequestId(claims: RequestIdClaims & { decisionBatch: string }, secret: string): string {
  const account = Buffer.from(claims.accountId, 'utf8');
  const payload = Buffer.alloc(HEADER_BYTES + account.length);
  payload.writeUInt8(VERSION, 0);
  payload.writeUInt8(claims.environment === 'live' ? 1 : 0, 1);
  payload.writeUIntBE(claims.issuedAt, 2, 6);
  nextNonce(payload, 8);
  Buffer.from(claims.userHash, 'hex').copy(payload, USER_HASH_OFFSET, 0, USER_HASH_BYTES);
  Buffer.from(claims.decisionBatch, 'hex').copy(payload, BATCH_OFFSET, 0, BATCH_BYTES);
  account.copy(payload, HEADER_BYTES);
  return `req_${Buffer.concat([payload, mac(secret, payload)]).toString('base64url')}`;
}

export const isWellFormedRequestId = (value: unknown): value is string => typeof value === 'string' && REQUEST_ID_PATTERN.test(value);

function decode(payload: Buffer): RequestIdClaims | null {
  const version = payload.readUInt8(0);
  const accountOffset = version === VERSION ? HEADER_BYTES : version === UNBATCHED_VERSION ? BATCH_OFFSET : -1;
  if (accountOffset < 0 || payload.length <= accountOffset) return null;
  return {
    environment: payload.readUInt8(1) === 1 ? 'live' : 'test',
    issuedAt: payload.readUIntBE(2, 6),
    userHash: payload.subarray(USER_HASH_OFFSET, BATCH_OFFSET).toString('hex'),
    ...(version === VERSION ? { decisionBatch: payload.subarray(BATCH_OFFSET, HEADER_BYTES).toString('hex') } : {}),
    accountId: payload.subarray(accountOffset).toString('utf8'),
  };
}

/**
 * The claims of a requestId the API has already verified (the worker reads them from jobs);
 * no signature check.
 */
export function readRequestIdClaims(requestId: string): RequestIdClaims | null {
  if (!isWellFormedRequestId(requestId)) return null;
  const raw = Buffer.from(requestId.slice(4), 'base64url');
  return raw.length > MAC_BYTES ? decode(raw.subarray(0, raw.length - MAC_BYTES)) : null;
}

/** The claims of an authentic requestId, or null when it was not issued by this service. */
export function verifyRequestId(requestId: string, secret: string): RequestIdClaims | null {
  if (!isWellFormedRequestId(requestId)) return null;
  const raw = Buffer.from(requestId.slice(4), 'base64url');
  // Node decodes base64url leniently; accept only the canonical spelling of an id.
  if (raw.toString('base64url') !== requestId.slice(4)) return null;
  if (raw.length <= BATCH_OFFSET + MAC_BYTES) return null;
  const payload = raw.subarray(0, raw.length - MAC_BYTES);
  const given = raw.subarray(raw.length - MAC_BYTES);
  if (!timingSafeEqual(given, mac(secret, payload))) return null;
  return decode(payload);
}
