import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';

/** The issuer an authenticator app shows beside the account. */
const ISSUER = 'Context & Outcome';
const PERIOD_SECONDS = 30;
/** A code of the step before or after now is accepted too: phone clocks drift and people type slowly. */
const WINDOW_STEPS = 1;

/**
 * TOTP codes (RFC 6238: SHA-1, 6 digits, 30 s) of the dashboard's two-factor sign-in. The time
 * is the injected clock's, so tests choose it. Secrets are kept sealed (AES-256-GCM under a key
 * derived from COS_SECRET): a copy of the database alone does not give anyone's codes away.
 */
export class TotpCodes {
  constructor(
    private readonly key: Buffer,
    private readonly clock: () => number = Date.now,
  ) {
    if (key.length !== 32) throw new Error('the TOTP sealing key is 32 bytes');
  }

  /** A new random secret (160 bits, as RFC 4226 recommends), in base32 as apps take it typed. */
  newSecret(): string {
    return new Secret({ size: 20 }).base32;
  }

  /** The otpauth:// URI an authenticator app reads from the QR code. */
  uri(secret: string, email: string): string {
    return this.totp(secret, email).toString();
  }

  /** The URI as a QR code in SVG, drawn here: nothing is fetched from elsewhere to show it. */
  qrSvg(uri: string): Promise<string> {
    return QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  }

  /** The time-step `code` belongs to, within one step of now; null when it matches none. */
  stepOf(secret: string, code: string): number | null {
    const token = code.replace(/\s/g, '');
    if (!/^\d{6}$/.test(token)) return null;
    const timestamp = this.clock();
    const delta = this.totp(secret).validate({ token, timestamp, window: WINDOW_STEPS });
    return delta === null ? null : Math.floor(timestamp / 1000 / PERIOD_SECONDS) + delta;
  }

  seal(secret: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), sealed].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
  }

  open(sealed: string): string {
    const [version, iv, tag, data] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error('not a sealed TOTP secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  }

  private totp(secret: string, label = 'dashboard'): TOTP {
    return new TOTP({ issuer: ISSUER, label, secret: Secret.fromBase32(secret), period: PERIOD_SECONDS, digits: 6, algorithm: 'SHA1' });
  }
}
