import { createDecipheriv, createHmac } from 'node:crypto';
import {
  MAX_REQUEST_ID_LENGTH,
  REQUEST_ID_PATTERN,
  isWellFormedRequestId,
  issueRequestId,
  openRequestId,
  readRequestIdClaims,
  sealable,
  verifyRequestId,
  type RequestIdClaims,
} from '../../shared/ids/request-id';
import { contextRequestSchema } from '../../api/schemas/request.schemas';
import { userHash } from '../../shared/ids/user-hash';
import { buildCarriedDecision } from '../support/request-ids';

const SECRET = 'unit-test-secret-0123456789';
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const claims: RequestIdClaims = {
  accountId: 'acct_7fQ2kLm9xPz4Rt1B',
  environment: 'live',
  issuedAt: 1_790_000_000_123,
  userHash: '0123456789abcdef',
};
const decision = buildCarriedDecision('alice@example.com');
const issued = { ...claims, decision };

describe('request ids', () => {
  it('round-trips: verify returns exactly the claims it was issued with, open the decision', () => {
    const id = issueRequestId(issued, SECRET);
    expect(id).toMatch(REQUEST_ID_PATTERN);
    expect(verifyRequestId(id, SECRET)).toEqual(claims);
    expect(openRequestId(id, SECRET)).toEqual({ claims, decision });
    const testClaims: RequestIdClaims = { accountId: 'acct_other', environment: 'test', issuedAt: 0, userHash: 'ffffffffffffffff' };
    expect(verifyRequestId(issueRequestId({ ...testClaims, decision }, SECRET), SECRET)).toEqual(testClaims);
  });

  it('keeps non-ASCII account ids and millisecond timestamps intact', () => {
    const c: RequestIdClaims = { accountId: 'acct_ünï_東京', environment: 'test', issuedAt: 2 ** 47 + 5, userHash: '00ff00ff00ff00ff' };
    expect(verifyRequestId(issueRequestId({ ...c, decision }, SECRET), SECRET)).toEqual(c);
  });

  it.each([
    ['no complexity and no task type', { context: {} }],
    ['an empty task type', { context: { taskComplexity: 'low' as const, taskType: '' } }],
    ['a task type of 100 characters', { context: { taskComplexity: 'high' as const, taskType: '東'.repeat(100) } }],
    [
      'the last value of every dimension',
      { choice: { framing: 'curiosity', style: 'playful', complexityHandling: 'whole', encouragement: 'enthusiastic' } as const },
    ],
  ])('seals the decision with %s', (_label, overrides) => {
    const sealed = buildCarriedDecision('user 😀 ünï', overrides);
    expect(openRequestId(issueRequestId({ ...claims, decision: sealed }, SECRET), SECRET)?.decision).toEqual(sealed);
  });

  it('seals probabilities as float32, and sealable rounds them to the same values', () => {
    const probabilities = { framing: 0.1, style: 1 / 3, complexityHandling: 0.999999999, encouragement: 1e-9 };
    const opened = openRequestId(issueRequestId({ ...claims, decision: { ...decision, probabilities } }, SECRET), SECRET);
    expect(opened!.decision.probabilities).toEqual(sealable(probabilities));
    expect(opened!.decision.probabilities.style).toBeCloseTo(1 / 3, 7);
  });

  it('stays within its documented length for the longest user id, task type and account', () => {
    // The longest the request schemas accept: their limits count code points, here of 4 UTF-8 bytes each.
    const userId = '😀'.repeat(256);
    const taskType = '\u{10FFFF}'.repeat(100);
    expect(contextRequestSchema.safeParse({ userId, task: 'Write the report', taskType }).success).toBe(true);
    const longest = buildCarriedDecision(userId, { context: { taskComplexity: 'low', taskType } });
    const id = issueRequestId({ ...claims, accountId: 'a'.repeat(255), decision: longest }, SECRET);
    expect(id.length).toBeLessThanOrEqual(MAX_REQUEST_ID_LENGTH);
    expect(id).toMatch(REQUEST_ID_PATTERN);
    expect(verifyRequestId(id, SECRET)).toEqual({ ...claims, accountId: 'a'.repeat(255) });
    expect(openRequestId(id, SECRET)?.decision).toEqual(longest);
  });

  it('shows neither the user id nor the task type: the decision is encrypted', () => {
    const id = issueRequestId({ ...claims, decision: { ...decision, context: { taskType: 'quarterly-report' } } }, SECRET);
    const bytes = Buffer.from(id.slice(4), 'base64url').toString('latin1');
    expect(bytes).not.toContain('alice');
    expect(bytes).not.toContain('quarterly');
    expect(openRequestId(id, `${SECRET}-other`)?.decision.userId).not.toBe('alice@example.com');
  });

  it('seals exactly as documented: AES-256-CTR under HMAC(secret, "rid-seal") with iv nonce ‖ 0⁴, then the MAC', () => {
    const id = issueRequestId(issued, SECRET);
    const raw = Buffer.from(id.slice(4), 'base64url');
    const accountEnd = 29 + raw.readUInt8(28);
    const sealed = raw.subarray(accountEnd, raw.length - 16);
    const key = createHmac('sha256', SECRET).update('rid-seal').digest();
    const decipher = createDecipheriv('aes-256-ctr', key, Buffer.concat([raw.subarray(8, 20), Buffer.alloc(4)]));
    const plain = Buffer.concat([decipher.update(sealed), decipher.final()]);
    expect(plain.readUInt8(0)).toBe(2); // medium
    expect(plain.subarray(23).toString('utf8')).toBe(decision.userId); // no task type: length 0xFFFF, then the user
    expect(plain.readUInt16BE(21)).toBe(0xffff);
    const mac = createHmac('sha256', SECRET)
      .update('rid:')
      .update(raw.subarray(0, raw.length - 16))
      .digest()
      .subarray(0, 16);
    expect(raw.subarray(raw.length - 16)).toEqual(mac);
  });

  it('carries the user as a keyed hash, readable without the secret by the worker', () => {
    const tenant = { accountId: 'acct_x', environment: 'live' as const };
    const hash = userHash(SECRET, tenant, 'alice@example.com');
    expect(hash).toMatch(/^[0-9a-f]{16}$/);
    expect(userHash(SECRET, tenant, 'bob@example.com')).not.toBe(hash);
    expect(userHash(`${SECRET}2`, tenant, 'alice@example.com')).not.toBe(hash);
    expect(userHash(SECRET, { ...tenant, environment: 'test' }, 'alice@example.com')).not.toBe(hash);
    const id = issueRequestId({ ...tenant, issuedAt: 5, userHash: hash, decision }, SECRET);
    expect(readRequestIdClaims(id)).toEqual({ ...tenant, issuedAt: 5, userHash: hash });
  });

  it('refuses an authentic payload of another layout version', () => {
    const raw = Buffer.from(issueRequestId(issued, SECRET).slice(4), 'base64url');
    const payload = Buffer.from(raw.subarray(0, raw.length - 16));
    for (const version of [2, 3, 5]) {
      payload.writeUInt8(version, 0);
      const mac = createHmac('sha256', SECRET).update('rid:').update(payload).digest().subarray(0, 16);
      const id = `req_${Buffer.concat([payload, mac]).toString('base64url')}`;
      expect(verifyRequestId(id, SECRET)).toBeNull();
      expect(readRequestIdClaims(id)).toBeNull();
      expect(openRequestId(id, SECRET)).toBeNull();
    }
  });

  it('is refused under another secret', () => {
    expect(verifyRequestId(issueRequestId(issued, SECRET), `${SECRET}-rotated`)).toBeNull();
  });

  // accountId lengths chosen so the encoded id has 0, 2 and 4 unused trailing bits
  it.each(['acct_7fQ2kLm9xPz4Rt1B', 'acct_7fQ2kLm9xPz4Rt1', 'acct_7fQ2kLm9xPz4Rt'])(
    'refuses the id when any single character is changed (accountId %s)',
    (accountId) => {
      const id = issueRequestId({ ...issued, accountId }, SECRET);
      const accepted: number[] = [];
      for (let i = 4; i < id.length; i++) {
        const original = ALPHABET.indexOf(id[i]!);
        // flip the lowest bit of the 6-bit symbol: the smallest possible tampering
        const tampered = `${id.slice(0, i)}${ALPHABET[original ^ 1]}${id.slice(i + 1)}`;
        if (verifyRequestId(tampered, SECRET) !== null) accepted.push(i);
      }
      expect(accepted).toEqual([]);
    },
  );

  it('refuses truncated and extended ids', () => {
    const id = issueRequestId(issued, SECRET);
    expect(verifyRequestId(id.slice(0, -1), SECRET)).toBeNull();
    expect(verifyRequestId(id.slice(0, -4), SECRET)).toBeNull();
    expect(verifyRequestId(`${id}AAAA`, SECRET)).toBeNull();
  });

  it('issues a different id for the same claims every time', () => {
    const ids = new Set(Array.from({ length: 500 }, () => issueRequestId(issued, SECRET)));
    expect(ids.size).toBe(500);
  });

  it('does not show the accountId in clear text', () => {
    const id = issueRequestId(issued, SECRET);
    expect(id).not.toContain(claims.accountId);
    expect(id).not.toContain('acct_');
  });

  it.each([
    ['undefined', undefined],
    ['a number', 42],
    ['empty', ''],
    ['no prefix', 'abcdefghijabcdefghijabcdefghijabcdefghijabcdefghij'],
    ['too short', 'req_abc'],
    ['bad characters', `req_${'a'.repeat(39)}+`],
    ['padding', `req_${'a'.repeat(40)}==`],
    ['too long', `req_${'a'.repeat(MAX_REQUEST_ID_LENGTH - 3)}`],
  ])('isWellFormedRequestId rejects %s, and verify returns null', (_label, value) => {
    expect(isWellFormedRequestId(value)).toBe(false);
    if (typeof value === 'string') expect(verifyRequestId(value, SECRET)).toBeNull();
  });

  it('verify returns null for well-formed garbage of every length without throwing', () => {
    for (let length = 40; length <= 120; length++) {
      const garbage = `req_${'Ab1-_'.repeat(30).slice(0, length)}`;
      expect(isWellFormedRequestId(garbage)).toBe(true);
      expect(verifyRequestId(garbage, SECRET)).toBeNull();
    }
  });
});
