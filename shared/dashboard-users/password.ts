import { Algorithm, hash, verify } from '@node-rs/argon2';
import { z } from 'zod';
import { randomBase62 } from '../util/random-base62';

/** argon2id with the library's recommended cost (19 MiB, 2 passes): OWASP's first choice. */
const OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 256;

/** What a new password must be, wherever one is set (the CLI, the dashboard's change of password). */
export const newPasswordSchema = z
  .string()
  .min(MIN_PASSWORD_LENGTH, `at least ${MIN_PASSWORD_LENGTH} characters`)
  .max(MAX_PASSWORD_LENGTH, `at most ${MAX_PASSWORD_LENGTH} characters`);

export const hashPassword = (password: string): Promise<string> => hash(password, OPTIONS);

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false; // a malformed stored hash never signs anyone in
  }
}

/** 24 base62 characters: about 143 bits, typed once and kept in a password manager. */
export const generatePassword = (): string => randomBase62(24);

let dummy: Promise<string> | undefined;

/**
 * A hash of a random password, verified when the email is unknown so that a wrong email and a
 * wrong password cost the same time.
 */
export function dummyPasswordHash(): Promise<string> {
  dummy ??= hashPassword(generatePassword());
  return dummy;
}
