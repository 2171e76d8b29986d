import type { NextFunction, Request, Response } from 'express';
import type { Environment, Tenant } from '../../shared/domain/environment';
import { AppError } from '../../shared/errors/app-error';
import { hashApiKey, hashesEqual, parseApiKey, type Scope } from '../../shared/keys/api-key';
import type { KeyCredential } from '../../shared/keys/key.repository';
import { readBearerKey } from '../auth/authorization-header';
import type { CredentialCache } from '../auth/credential-cache';
import { BoundedMap } from '../../shared/cache/bounded-map';
import { notePresentedKey } from './traffic.middleware';

export interface AuthContext {
  tenant: Tenant;
  credential: KeyCredential;
}

const unauthorized = (message: string) => new AppError('UNAUTHORIZED', message);
/** Well-formed keys whose hash the API remembers, least recently used dropped. */
const KNOWN_KEY_HASHES = 10_000;

export function authContext(res: Response): AuthContext {
  return res.locals.auth as AuthContext;
}

/** Authentication and scopes; runs after routing and before the body is read. */
export function authenticate(deps: {
  credentials: CredentialCache;
  secret: string;
  environments: readonly Environment[];
  /**
   * Meters an authenticated request refused here (403), which never reaches the limiter, and
   * returns the rate-limit headers its response carries (none for test keys).
   */
  meterRefusal: (credential: KeyCredential, endpoint: string) => Promise<Record<string, string>>;
}) {
  // The hashes of recently presented keys: a key's HMAC is worth remembering, as every request of
  // a client presents the same key (the credential cache is keyed by the hash).
  const hashes = new BoundedMap<string, { keyHash: Buffer; hex: string }>(KNOWN_KEY_HASHES);
  const hashOf = (key: string) =>
    hashes.getOrSet(key, () => {
      const keyHash = hashApiKey(key, deps.secret);
      return { keyHash, hex: keyHash.toString('hex') };
    });
  return (scope: Scope, endpoint: string) =>
    async (req: Request, res: Response, next: NextFunction): Promise<void> => {
      const bearer = readBearerKey(req.headers.authorization);
      if ('problem' in bearer) return next(unauthorized(bearer.problem));
      const { key } = bearer;
      const parsed = parseApiKey(key);
      if (!parsed) return next(unauthorized('API key is not in the cos_sk_<test|live>_<id> format'));
      if (!deps.environments.includes(parsed.environment)) {
        return next(unauthorized(`This deployment does not serve ${parsed.environment} keys`));
      }
      const { keyHash, hex } = hashOf(key);
      let credential: KeyCredential | null;
      try {
        credential = await deps.credentials.lookup(hex, keyHash);
      } catch {
        return next(new AppError('SERVICE_UNAVAILABLE', 'Key store unavailable, retry shortly', undefined, { 'Retry-After': '1' }));
      }
      const now = Date.now();
      if (!credential || !hashesEqual(credential.keyHash, keyHash)) return next(unauthorized('Invalid API key'));
      notePresentedKey(res, credential.id);
      if (
        credential.environment !== parsed.environment ||
        credential.revokedAt ||
        credential.deletedAt ||
        (credential.expiresAt && Date.parse(credential.expiresAt) <= now)
      ) {
        return next(unauthorized('Invalid API key'));
      }
      if (credential.restricted) {
        const headers = await deps.meterRefusal(credential, endpoint);
        return next(new AppError('ACCOUNT_RESTRICTED', 'This account is restricted', undefined, headers));
      }
      if (!credential.scopes.includes(scope)) {
        const headers = await deps.meterRefusal(credential, endpoint);
        return next(new AppError('FORBIDDEN', `This key lacks the "${scope}" scope`, { requiredScope: scope }, headers));
      }
      deps.credentials.markUsed(credential.id, new Date(now));
      res.locals.auth = {
        tenant: { accountId: credential.accountId, environment: credential.environment },
        credential,
      } satisfies AuthContext;
      next();
    };
}
