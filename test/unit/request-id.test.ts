import { createHmac } from 'node:crypto';
import {
  REQUEST_ID_PATTERN,
  isWellFormedRequestId,
  issueRequestId,
  readRequestIdClaims,
  verifyRequestId,
  type RequestIdClaims,
} from '../../shared/keys/request-id';
import { userHash } from '../../shared/keys/user-hash';

const SECRET = 'unit-test-secret-0123456789';
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const claims: Issued = {
  accountId: 'acct_7fQ2kLm9xPz4Rt1B',
  environment: 'live',
  issuedAt: 1_790_000_000_123,
  userHash: '0123456789abcdef',
  decisionBatch: '00112233445566ff',
};
type Issued = RequestIdClaims & { decisionBatch: string };

describe('request ids', () => {
  it('round-trips: verify returns exactly the claims it was issued with', () => {
    const id = issueRequestId(claims, SECRET);
    expect(id).toMatch(REQUEST_ID_PATTERN);
    expect(verifyRequestId(id, SECRET)).toEqual(claims);
    const testClaims: Issued = {
      accountId: 'acct_other',
      environment: 'test',
      issuedAt: 0,
      userHash: 'ffffffffffffffff',
      decisionBatch: 'ffffffffffffffff',
    };
    expect(verifyRequestId(issueRequestId(testClaims, SECRET), SECRET)).toEqual(testClaims);
  });

  it('keeps non-ASCII account ids and millisecond timestamps intact', () => {
    const c: Issued = {
      accountId: 'acct_ünï_東京',
      environment: 'test',
      issuedAt: 2 ** 47 + 5,
      userHash: '00ff00ff00ff00ff',
      decisionBatch: '0000000000000001',
    };
    expect(verifyRequestId(issueRequestId(c, SECRET), SECRET)).toEqual(c);
  });

  it('carries the user only as a keyed hash, readable without the secret by the worker', () => {
    const tenant = { accountId: 'acct_x', environment: 'live' as const };
    const hash = userHash(SECRET, tenant, 'alice@example.com');
    expect(hash).toMatch(/^[0-9a-f]{16}$/);
    expect(userHash(SECRET, tenant, 'bob@example.com')).not.toBe(hash);
    expect(userHash(`${SECRET}2`, tenant, 'alice@example.com')).not.toBe(hash);
    expect(userHash(SECRET, { ...tenant, environment: 'test' }, 'alice@example.com')).not.toBe(hash);
    const id = issueRequestId({ ...tenant, issuedAt: 5, userHash: hash, decisionBatch: '0123456789abcdef' }, SECRET);
    expect(Buffer.from(id.slice(4), 'base64url').toString('latin1')).not.toContain('alice');
    expect(readRequestIdClaims(id)).toEqual({ ...tenant, issuedAt: 5, userHash: hash, decisionBatch: '0123456789abcdef' });
  });

  it('still accepts a version 2 id (issued before decisions were batched), without a batch', () => {
    const account = Buffer.from(claims.accountId, 'utf8');
    const payload = Buffer.alloc(28 + account.length);
    payload.writeUInt8(2, 0);
    payload.writeUInt8(1, 1);
    payload.writeUIntBE(claims.issuedAt, 2, 6);
    Buffer.from(claims.userHash, 'hex').copy(payload, 20);
    account.copy(payload, 28);
    const mac = createHmac('sha256', SECRET).update('rid:').update(payload).digest().subarray(0, 16);
    const id = `req_${Buffer.concat([payload, mac]).toString('base64url')}`;
    const { decisionBatch: _batch, ...unbatched } = claims;
    expect(verifyRequestId(id, SECRET)).toEqual(unbatched);
    expect(readRequestIdClaims(id)).toEqual(unbatched);
  });

  it('is refused under another secret', () => {
    expect(verifyRequestId(issueRequestId(claims, SECRET), `${SECRET}-rotated`)).toBeNull();
  });

  // accountId lengths chosen so the encoded id has 0, 2 and 4 unused trailing bits
  it.each(['acct_7fQ2kLm9xPz4Rt1B', 'acct_7fQ2kLm9xPz4Rt1', 'acct_7fQ2kLm9xPz4Rt'])(
    'refuses the id when any single character is changed (accountId %s)',
    (accountId) => {
      const id = issueRequestId({ ...claims, accountId }, SECRET);
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
    const id = issueRequestId(claims, SECRET);
    expect(verifyRequestId(id.slice(0, -1), SECRET)).toBeNull();
    expect(verifyRequestId(id.slice(0, -4), SECRET)).toBeNull();
    expect(verifyRequestId(`${id}AAAA`, SECRET)).toBeNull();
  });

  it('issues a different id for the same claims every time', () => {
    const ids = new Set(Array.from({ length: 500 }, () => issueRequestId(claims, SECRET)));
    expect(ids.size).toBe(500);
  });

  it('does not show the accountId in clear text', () => {
    const id = issueRequestId(claims, SECRET);
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
    ['too long', `req_${'a'.repeat(201)}`],
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
