import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Signing secrets at rest: AES-256-GCM under a key derived with HKDF-SHA256 from COS_SECRET,
 * bound to the endpoint they belong to (its id is the additional data, so a ciphertext copied
 * onto another endpoint does not decrypt). Stored as `v1.<iv>.<ciphertext>.<tag>`, base64url:
 * the version names the derivation and the cipher, so a later format can be told apart.
 * Rotating COS_SECRET makes every stored secret unreadable (docs/OPERATIONS.md#webhooks).
 */
const VERSION = 'v1';
const HKDF_SALT = 'cos-webhook-signing-secrets';
const HKDF_INFO = 'v1 aes-256-gcm';

export class SecretUnreadableError extends Error {}

export class SecretBox {
  private readonly key: Buffer;

  constructor(cosSecret: string) {
    this.key = Buffer.from(hkdfSync('sha256', cosSecret, HKDF_SALT, HKDF_INFO, 32));
  }

  seal(plaintext: string, boundTo: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(boundTo));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv, ciphertext, cipher.getAuthTag()]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  /** The plaintext; SecretUnreadableError when it was sealed under another COS_SECRET, another endpoint, or is damaged. */
  open(sealed: string, boundTo: string): string {
    const [version, iv, ciphertext, tag, ...rest] = sealed.split('.');
    if (version !== VERSION || iv === undefined || ciphertext === undefined || tag === undefined || rest.length > 0) {
      throw new SecretUnreadableError('the signing secret is not in a known format');
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(boundTo));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretUnreadableError('the signing secret cannot be decrypted: was COS_SECRET changed since it was made?');
    }
  }
}

/** A new signing secret: `whsec_` and the base64 of 32 random bytes (the Standard Webhooks form). */
export const newSigningSecret = () => `whsec_${randomBytes(32).toString('base64')}`;
