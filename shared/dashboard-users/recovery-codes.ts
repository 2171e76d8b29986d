import { createHash, randomBytes } from 'node:crypto';

export const RECOVERY_CODE_COUNT = 10;

/** Lower-case letters and digits without look-alikes (0/o, 1/l/i). */
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/**
 * A recovery code: 20 characters of a 31-letter alphabet (about 99 bits), shown in groups of
 * five. That much entropy makes a plain SHA-256 enough to store it: there is nothing to guess.
 */
export function generateRecoveryCode(): string {
  let code = '';
  while (code.length < 20) {
    for (const byte of randomBytes(32)) {
      // 248 = 8 × 31: rejection keeps every letter equally likely.
      if (byte < 248 && code.length < 20) code += ALPHABET[byte % ALPHABET.length];
    }
  }
  return code.match(/.{5}/g)!.join('-');
}

/** What is stored of a recovery code; spaces, dashes and case as typed do not matter. */
export function hashRecoveryCode(typed: string): string {
  const normalised = typed.toLowerCase().replace(/[^a-z0-9]/g, '');
  return createHash('sha256').update(normalised).digest('hex');
}

/** Whether the typed text has a recovery code's shape (rather than a 6-digit code). */
export const looksLikeRecoveryCode = (typed: string): boolean => typed.toLowerCase().replace(/[^a-z0-9]/g, '').length === 20;
