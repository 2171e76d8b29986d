import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';

/** A remembered device stays one this long after its last successful sign-in. */
export const DEVICE_COOKIE_MAX_AGE_MS = 180 * 86_400_000;

/**
 * A device cookie (OWASP's "device cookies" against online guessing, see
 * docs/adr/0017-sign-in-throttle.md): given to a browser at each successful sign-in, it says
 * "this browser signed in as this email before". Its value is `<email tag>.<nonce>.<signature>`:
 * the email only as a keyed hash, a random nonce naming the device's own attempt allowance, and
 * an HMAC over both, so it cannot be forged or moved to another email.
 */
export class DeviceCookies {
  /** `__Host-` when the cookie is Secure: then no other host or path can set or shadow it. */
  readonly name: string;

  constructor(
    private readonly secret: string,
    private readonly secure: boolean,
  ) {
    this.name = secure ? '__Host-cos_device' : 'cos_device';
  }

  private sign(text: string): string {
    return createHmac('sha256', this.secret).update(text).digest('base64url');
  }

  private emailTag(email: string): string {
    return this.sign(`email:${email}`).slice(0, 22);
  }

  /** The device nonce of a valid cookie for `email` in this request, or undefined. */
  deviceFor(req: Request, email: string): string | undefined {
    const value = readCookie(req, this.name);
    const [tag, nonce, signature, ...rest] = value?.split('.') ?? [];
    if (!tag || !nonce || !signature || rest.length > 0 || tag !== this.emailTag(email)) return undefined;
    const expected = Buffer.from(this.sign(`${tag}.${nonce}`));
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected) ? nonce : undefined;
  }

  /** Remembers this browser for `email` with a new nonce (a fresh allowance). */
  issue(res: Response, email: string): void {
    const tag = this.emailTag(email);
    const nonce = randomBytes(16).toString('base64url');
    res.cookie(this.name, `${tag}.${nonce}.${this.sign(`${tag}.${nonce}`)}`, {
      httpOnly: true,
      sameSite: 'strict',
      secure: this.secure,
      path: '/',
      maxAge: DEVICE_COOKIE_MAX_AGE_MS,
    });
  }
}

/** One cookie's value from the Cookie header (no cookie parser for one cookie). */
function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
