import { createCipheriv, createHmac, randomBytes, timingSafeEqual, type Cipher } from 'node:crypto';
import { DIMENSIONS, DIMENSION_NAMES, TASK_COMPLEXITY, type Choice } from '../domain/arms';
import type { Environment } from '../domain/environment';
import type { DecisionContext, SelectionProbabilities } from '../domain/learner';

/**
 * Signed request ids (docs/adr/0001-signed-request-ids.md). A requestId carries who it was
 * issued to and when, authenticated by an HMAC under the server secret, so POST /v1/outcome
 * can answer 404 (not issued to this tenant) and 410 (window closed) without reading storage.
 *
 * Layout version 4 (base64url):
 *
 *   version (1) | env (1) | issuedAt ms (6) | nonce (12) | userHash (8) | account length (1)
 *   | accountId (utf8) | sealed decision | HMAC-SHA-256("rid:" + all before it), first 16 bytes
 *
 *   sealed decision = AES-256-CTR(key = HMAC-SHA-256(secret, "rid-seal"), iv = nonce ‖ 0⁴) of
 *   task complexity (1: 0 unknown, 1 + index) | chosen value index per dimension (4)
 *   | selection probability per dimension (4 × float32) | taskType length (2, 0xFFFF: none)
 *   | taskType (utf8) | userId (utf8, the rest)
 *
 * The sealed decision is everything an outcome is learned from, so an outcome never depends on
 * its decision's log row having been written (docs/adr/0010-group-commit.md); it is encrypted so
 * that the id shows neither the user nor the task type. The version byte is the one place a
 * later layout would be told apart; this is the only layout there is.
 */
const VERSION = 4;
const NONCE_OFFSET = 8;
const NONCE_BYTES = 12;
const USER_HASH_BYTES = 8;
const MAC_BYTES = 16;
const USER_HASH_OFFSET = NONCE_OFFSET + NONCE_BYTES;
/** A length byte, then the account. */
const ACCOUNT_LENGTH_OFFSET = USER_HASH_OFFSET + USER_HASH_BYTES;
const MAX_ACCOUNT_BYTES = 255;
const NO_TASK_TYPE = 0xffff;
/** complexity (1) + choice (4) + probabilities (16) + taskType length (2). */
const SEALED_FIXED_BYTES = 1 + DIMENSION_NAMES.length + 4 * DIMENSION_NAMES.length + 2;
/**
 * userId ≤ 256 and taskType ≤ 100 characters, counted as the request schemas count them: in code
 * points (zod counts a string's code points), at most 4 UTF-8 bytes each.
 */
const MAX_UTF8_BYTES_PER_CHARACTER = 4;
const MAX_SEALED_BYTES = SEALED_FIXED_BYTES + MAX_UTF8_BYTES_PER_CHARACTER * (100 + 256);
const MAX_ID_BYTES = ACCOUNT_LENGTH_OFFSET + 1 + MAX_ACCOUNT_BYTES + MAX_SEALED_BYTES + MAC_BYTES;
/** The longest spelling of any id this service issues (base64url of MAX_ID_BYTES). */
export const MAX_REQUEST_ID_LENGTH = 4 + Math.ceil((MAX_ID_BYTES * 4) / 3);
export const REQUEST_ID_PATTERN = new RegExp(`^req_[A-Za-z0-9_-]{40,${MAX_REQUEST_ID_LENGTH - 4}}$`);

/** What a requestId says in clear: who it was issued to and when. */
export interface RequestIdClaims {
  accountId: string;
  environment: Environment;
  issuedAt: number;
  /** userHash(secret, tenant, userId): 16 hex characters. */
  userHash: string;
}

/** What an outcome is learned from; sealed inside the id. */
export interface CarriedDecision {
  userId: string;
  choice: Choice;
  /** Float32 values: the context service logs the same rounded values (`sealable`). */
  probabilities: SelectionProbabilities;
  context: DecisionContext;
}

/**
 * The seal's cipher, made once per secret: AES-256 in ECB mode, used only to encrypt counter
 * blocks into a CTR key stream — a cipher object made per id costs more than the encryption.
 */
interface SealKeys {
  secret: string;
  blocks: Cipher;
}
let lastKeys: SealKeys | undefined;
function keysOf(secret: string): SealKeys {
  if (lastKeys?.secret !== secret) {
    const blocks = createCipheriv('aes-256-ecb', createHmac('sha256', secret).update('rid-seal').digest(), null);
    blocks.setAutoPadding(false);
    lastKeys = { secret, blocks };
  }
  return lastKeys;
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

/**
 * AES-256-CTR under the seal key with counter blocks nonce ‖ uint32 i (the same stream as
 * `aes-256-ctr` with iv nonce ‖ 0⁴); the same call seals and opens.
 */
function cryptInPlace(keys: SealKeys, nonce: Buffer, data: Buffer): void {
  const blockCount = Math.ceil(data.length / 16);
  const counters = Buffer.allocUnsafe(blockCount * 16);
  for (let b = 0; b < blockCount; b++) {
    nonce.copy(counters, b * 16, 0, NONCE_BYTES);
    counters.writeUInt32BE(b, b * 16 + NONCE_BYTES);
  }
  const stream = keys.blocks.update(counters);
  for (let i = 0; i < data.length; i++) data[i] = data[i]! ^ stream[i]!;
}

/** The probabilities as an id carries them (float32). */
export function sealable(probabilities: SelectionProbabilities): SelectionProbabilities {
  return {
    framing: Math.fround(probabilities.framing),
    style: Math.fround(probabilities.style),
    complexityHandling: Math.fround(probabilities.complexityHandling),
    encouragement: Math.fround(probabilities.encouragement),
  };
}

/** The sealed decision's plain bytes, written into `target` from `start`; returns where they end. */
function writeDecision(target: Buffer, start: number, decision: CarriedDecision, taskTypeBytes: number): number {
  const complexity = decision.context.taskComplexity;
  let at = target.writeUInt8(complexity === undefined ? 0 : 1 + TASK_COMPLEXITY.indexOf(complexity), start);
  for (const dim of DIMENSION_NAMES) {
    const index = (DIMENSIONS[dim].values as readonly string[]).indexOf(decision.choice[dim]);
    if (index < 0) throw new Error(`not a ${dim} value: ${decision.choice[dim]}`);
    at = target.writeUInt8(index, at);
  }
  for (const dim of DIMENSION_NAMES) at = target.writeFloatBE(decision.probabilities[dim], at);
  const taskType = decision.context.taskType;
  at = target.writeUInt16BE(taskType === undefined ? NO_TASK_TYPE : taskTypeBytes, at);
  if (taskType !== undefined) at += target.write(taskType, at, 'utf8');
  return at + target.write(decision.userId, at, 'utf8');
}

function openDecision(plain: Buffer): CarriedDecision | null {
  if (plain.length < SEALED_FIXED_BYTES) return null;
  const complexityByte = plain.readUInt8(0);
  if (complexityByte > TASK_COMPLEXITY.length) return null;
  const choice = {} as Record<string, string>;
  const probabilities = {} as Record<string, number>;
  for (const [d, dim] of DIMENSION_NAMES.entries()) {
    const value = DIMENSIONS[dim].values[plain.readUInt8(1 + d)];
    if (value === undefined) return null;
    choice[dim] = value;
    probabilities[dim] = plain.readFloatBE(1 + DIMENSION_NAMES.length + 4 * d);
  }
  const taskTypeLength = plain.readUInt16BE(SEALED_FIXED_BYTES - 2);
  const taskTypeEnd = SEALED_FIXED_BYTES + (taskTypeLength === NO_TASK_TYPE ? 0 : taskTypeLength);
  if (taskTypeEnd > plain.length) return null;
  const context: DecisionContext = {};
  if (complexityByte > 0) context.taskComplexity = TASK_COMPLEXITY[complexityByte - 1];
  if (taskTypeLength !== NO_TASK_TYPE) context.taskType = plain.toString('utf8', SEALED_FIXED_BYTES, taskTypeEnd);
  return {
    userId: plain.toString('utf8', taskTypeEnd),
    choice: choice as Choice,
    probabilities: probabilities as SelectionProbabilities,
    context,
  };
}

/** A new requestId for this decision. */
export function issueRequestId(claims: RequestIdClaims & { decision: CarriedDecision }, secret: string): string {
  const { decision } = claims;
  const accountBytes = Buffer.byteLength(claims.accountId, 'utf8');
  if (accountBytes > MAX_ACCOUNT_BYTES) throw new Error('accountId too long for a requestId');
  const taskTypeBytes = decision.context.taskType === undefined ? 0 : Buffer.byteLength(decision.context.taskType, 'utf8');
  const headerBytes = ACCOUNT_LENGTH_OFFSET + 1 + accountBytes;
  const sealedBytes = SEALED_FIXED_BYTES + taskTypeBytes + Buffer.byteLength(decision.userId, 'utf8');
  // One buffer for the whole id: header, decision sealed in place, MAC.
  const id = Buffer.allocUnsafe(headerBytes + sealedBytes + MAC_BYTES);
  id.writeUInt8(VERSION, 0);
  id.writeUInt8(claims.environment === 'live' ? 1 : 0, 1);
  id.writeUIntBE(claims.issuedAt, 2, 6);
  nextNonce(id, NONCE_OFFSET);
  id.write(claims.userHash, USER_HASH_OFFSET, USER_HASH_BYTES, 'hex');
  id.writeUInt8(accountBytes, ACCOUNT_LENGTH_OFFSET);
  id.write(claims.accountId, ACCOUNT_LENGTH_OFFSET + 1, 'utf8');
  const sealedEnd = writeDecision(id, headerBytes, decision, taskTypeBytes);
  cryptInPlace(keysOf(secret), id.subarray(NONCE_OFFSET, NONCE_OFFSET + NONCE_BYTES), id.subarray(headerBytes, sealedEnd));
  mac(secret, id.subarray(0, sealedEnd)).copy(id, sealedEnd);
  return `req_${id.toString('base64url')}`;
}

export const isWellFormedRequestId = (value: unknown): value is string => typeof value === 'string' && REQUEST_ID_PATTERN.test(value);

/** The claims of a payload (the id without its MAC), and where its sealed decision starts. */
function decode(payload: Buffer): { claims: RequestIdClaims; sealedAt: number } | null {
  if (payload.length <= ACCOUNT_LENGTH_OFFSET || payload.readUInt8(0) !== VERSION) return null;
  const accountStart = ACCOUNT_LENGTH_OFFSET + 1;
  const accountEnd = accountStart + payload.readUInt8(ACCOUNT_LENGTH_OFFSET);
  if (accountEnd > payload.length || accountEnd <= accountStart) return null;
  return {
    claims: {
      environment: payload.readUInt8(1) === 1 ? 'live' : 'test',
      issuedAt: payload.readUIntBE(2, 6),
      userHash: payload.toString('hex', USER_HASH_OFFSET, ACCOUNT_LENGTH_OFFSET),
      accountId: payload.toString('utf8', accountStart, accountEnd),
    },
    sealedAt: accountEnd,
  };
}

/** The payload of a well-formed id (MAC cut off), unchecked. */
function payloadOf(requestId: string): Buffer | null {
  if (!isWellFormedRequestId(requestId)) return null;
  const raw = Buffer.from(requestId.slice(4), 'base64url');
  return raw.length > MAC_BYTES ? raw.subarray(0, raw.length - MAC_BYTES) : null;
}

/**
 * The claims of a requestId the API has already verified (the worker reads them from jobs);
 * no signature check.
 */
export function readRequestIdClaims(requestId: string): RequestIdClaims | null {
  const payload = payloadOf(requestId);
  return payload ? (decode(payload)?.claims ?? null) : null;
}

/**
 * The claims of a requestId the API has already verified (the worker reads it from outcome
 * jobs) and the decision sealed in it, read in one pass; null only for bytes that are not such
 * an id.
 */
export function openRequestId(requestId: string, secret: string): { claims: RequestIdClaims; decision: CarriedDecision } | null {
  const payload = payloadOf(requestId);
  const decoded = payload ? decode(payload) : null;
  if (!payload || !decoded) return null;
  const nonce = payload.subarray(NONCE_OFFSET, NONCE_OFFSET + NONCE_BYTES);
  const plain = Buffer.from(payload.subarray(decoded.sealedAt));
  cryptInPlace(keysOf(secret), nonce, plain);
  const decision = openDecision(plain);
  return decision ? { claims: decoded.claims, decision } : null;
}

/** The claims of an authentic requestId, or null when it was not issued by this service. */
export function verifyRequestId(requestId: string, secret: string): RequestIdClaims | null {
  if (!isWellFormedRequestId(requestId)) return null;
  const raw = Buffer.from(requestId.slice(4), 'base64url');
  // Node decodes base64url leniently; accept only the canonical spelling of an id.
  if (raw.toString('base64url') !== requestId.slice(4)) return null;
  if (raw.length <= ACCOUNT_LENGTH_OFFSET + MAC_BYTES) return null;
  const payload = raw.subarray(0, raw.length - MAC_BYTES);
  const given = raw.subarray(raw.length - MAC_BYTES);
  if (!timingSafeEqual(given, mac(secret, payload))) return null;
  return decode(payload)?.claims ?? null;
}
