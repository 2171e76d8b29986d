import type { NextFunction, Request, Response } from 'express';
import type { CredentialCache } from '../../api/auth/credential-cache';
import { authenticate, type PresentedKey } from '../../api/middleware/auth.middleware';
import { BoundedMap } from '../../shared/cache/bounded-map';
import { hashApiKey } from '../../shared/credentials/api-key';
import type { KeyCredential } from '../../shared/credentials/key.repository';

/**
 * What the API remembers of Authorization headers: a header in the canonical `Bearer <key>`
 * form, so that padded spellings of one key (the scheme and key may be separated by any
 * whitespace) cannot fill memory. The credential cache stands in as a plain object.
 */
const SECRET = 'unit-secret-0123456789abcdef';
const KEY = `cos_sk_test_${'a'.repeat(40)}`;
const credential = {
  id: 'key_1',
  accountId: 'acct_1',
  environment: 'test',
  keyHash: hashApiKey(KEY, SECRET),
  scopes: ['context', 'outcome', 'profile'],
  revokedAt: null,
  deletedAt: null,
  expiresAt: null,
  restricted: false,
} as unknown as KeyCredential;

function setup() {
  const presented = new BoundedMap<string, PresentedKey>(100);
  const credentials = { peek: () => credential, lookup: async () => credential, markUsed: () => undefined } as unknown as CredentialCache;
  const guard = authenticate({ credentials, secret: SECRET, environments: ['test', 'live'], meterRefusal: async () => ({}), presented })(
    'context',
    'context',
  );
  const run = (authorization: string) => {
    let outcome: unknown = 'pending';
    const res = { locals: {} } as unknown as Response;
    guard({ headers: { authorization } } as Request, res, ((error?: unknown) => (outcome = error ?? 'admitted')) as NextFunction);
    return outcome;
  };
  return { presented, run };
}

it('remembers a canonical header once and admits it again from memory', () => {
  const { presented, run } = setup();
  expect(run(`Bearer ${KEY}`)).toBe('admitted');
  expect(run(`Bearer ${KEY}`)).toBe('admitted');
  expect(presented.size).toBe(1);
});

it('admits padded spellings of the key but remembers none of them', () => {
  const { presented, run } = setup();
  for (let i = 1; i <= 50; i++) expect(run(`Bearer${' '.repeat(i)}${KEY}${'\t'.repeat(i % 3)}`)).toBe('admitted');
  expect(presented.size).toBe(0);
});

it('remembers nothing of a header it refuses', () => {
  const { presented, run } = setup();
  expect(run('Bearer cos_sk_test_short')).toMatchObject({ code: 'UNAUTHORIZED' });
  expect(run('Basic abc')).toMatchObject({ code: 'UNAUTHORIZED' });
  expect(presented.size).toBe(0);
});
