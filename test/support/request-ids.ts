import { createHmac } from 'node:crypto';
import type { CarriedDecision, RequestIdClaims } from '../../shared/keys/request-id';

/** A decision as a version 4 requestId seals it. */
export function buildCarriedDecision(userId = 'user-1', overrides: Partial<CarriedDecision> = {}): CarriedDecision {
  return {
    userId,
    choice: { framing: 'purpose', style: 'warm', complexityHandling: 'chunked', encouragement: 'moderate' },
    probabilities: { framing: 0.5, style: 0.25, complexityHandling: 1, encouragement: 0.125 },
    context: { taskComplexity: 'medium' },
    ...overrides,
  };
}

/**
 * A requestId as versions 2 and 3 of the service issued them (no sealed decision; version 3
 * names its decision batch job): they are still honoured within the outcome window.
 */
export function issueEarlierRequestId(claims: RequestIdClaims, secret: string): string {
  const account = Buffer.from(claims.accountId, 'utf8');
  const batched = claims.decisionBatch !== undefined;
  const header = batched ? 36 : 28;
  const payload = Buffer.alloc(header + account.length);
  payload.writeUInt8(batched ? 3 : 2, 0);
  payload.writeUInt8(claims.environment === 'live' ? 1 : 0, 1);
  payload.writeUIntBE(claims.issuedAt, 2, 6);
  createHmac('sha256', 'nonce').update(String(Math.random())).digest().copy(payload, 8, 0, 12);
  Buffer.from(claims.userHash, 'hex').copy(payload, 20);
  if (batched) Buffer.from(claims.decisionBatch!, 'hex').copy(payload, 28);
  account.copy(payload, header);
  const mac = createHmac('sha256', secret).update('rid:').update(payload).digest().subarray(0, 16);
  return `req_${Buffer.concat([payload, mac]).toString('base64url')}`;
}
