import { z } from 'zod';

/** Emails are kept and compared in lower case: one person, one row. */
export const emailSchema = z
  .string()
  .trim()
  .max(254)
  .pipe(z.email())
  .transform((email) => email.toLowerCase());
