import type { NextFunction, Request, Response } from 'express';
import type { Environment, Tenant } from '../../shared/domain/environment';
import { AppError } from '../../shared/errors/app-error';
import { hashApiKey, hashesEqual, parseApiKey, type Scope } from '../../shared/credentials/api-key';
import type { KeyCredential } from '../../shared/credentials/key.repository';
import { readBearerKey } from '../auth/authorization-header';
import type { CredentialCache } from '../auth/credential-cache';
import { BoundedMap } from '../../shared/cache/bounded-map';
import { notePresentedKey } from './traffic.middleware';

export interface AuthContext {
  tenant: Tenant;
  credential: KeyCredential;
}

const unauthorized = (message: string) => new AppError('UNAUTHORIZED', message);
/** Authorization headers whose key the API remembers, least recently used dropped. */
const KNOWN_KEY_HASHES = 10_000;

export function authContext(res: Response): AuthContext {
  return res.locals.auth as AuthContext;
}

/** A presented key that is well formed and of a served environment, with its keyed hash. */
export interface PresentedKey {
  environment: Environment;
  keyHash: Buffer;
  hex: string;
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
  /** Where what each header says is remembered (tests pass their own to look into it). */
  presented?: BoundedMap<string, PresentedKey>;
}) {
  // Every request of a client sends the same Authorization header: what it says (the key's
  // environment and HMAC, by which credentials are cached) is remembered per header value — only
  // for a header in the canonical `Bearer <key>` form, so a client cannot fill the memory with
  // padded variants of one key (keys are at most 140 characters).
  const presented = deps.presented ?? new BoundedMap<string, PresentedKey>(KNOWN_KEY_HASHES);
  const read = (header: string | undefined): PresentedKey | AppError => {
    const known = header === undefined ? undefined : presented.get(header);
    if (known) return known;
    const bearer = readBearerKey(header);
    if ('problem' in bearer) return unauthorized(bearer.problem);
    const parsed = parseApiKey(bearer.key);
    if (!parsed) return unauthorized('API key is not in the cos_sk_<test|live>_<id> format');
    if (!deps.environments.includes(parsed.environment)) return unauthorized(`This deployment does not serve ${parsed.environment} keys`);
    const keyHash = hashApiKey(bearer.key, deps.secret);
    const key = { environment: parsed.environment, keyHash, hex: keyHash.toString('hex') };
    if (header === `Bearer ${bearer.key}`) presented.set(header, key);
    return key;
  };

  return (scope: Scope, endpoint: string) => {
    /** The checks after the credential is known: validity, restriction, scope. */
    const admit = (credential: KeyCredential | null, key: PresentedKey, res: Response, next: NextFunction): void => {
      const now = Date.now();
      if (!credential || !hashesEqual(credential.keyHash, key.keyHash)) return next(unauthorized('Invalid API key'));
      notePresentedKey(res, credential.id);
      if (
        credential.environment !== key.environment ||
        credential.revokedAt ||
        credential.deletedAt ||
        (credential.expiresAt && Date.parse(credential.expiresAt) <= now)
      ) {
        return next(unauthorized('Invalid API key'));
      }
      if (credential.restricted) {
        return void deps
          .meterRefusal(credential, endpoint)
          .then((headers) => next(new AppError('ACCOUNT_RESTRICTED', 'This account is restricted', undefined, headers)));
      }
      if (!credential.scopes.includes(scope)) {
        return void deps
          .meterRefusal(credential, endpoint)
          .then((headers) => next(new AppError('FORBIDDEN', `This key lacks the "${scope}" scope`, { requiredScope: scope }, headers)));
      }
      deps.credentials.markUsed(credential.id, now);
      const auth: AuthContext = { tenant: { accountId: credential.accountId, environment: credential.environment }, credential };
      res.locals.auth = auth;
      next();
    };

    return (req: Request, res: Response, next: NextFunction): void => {
      const key = read(req.headers.authorization);
      if (key instanceof AppError) return next(key);
      // A cached credential answers at once; only a miss waits for Postgres.
      const cached = deps.credentials.peek(key.hex);
      if (cached !== undefined) return admit(cached, key, res, next);
      deps.credentials
        .lookup(key.hex, key.keyHash)
        .then(
          (credential) => admit(credential, key, res, next),
          () => next(new AppError('SERVICE_UNAVAILABLE', 'Key store unavailable, retry shortly', undefined, { 'Retry-After': '1' })),
        )
        .catch(next);
    };
  };
}
