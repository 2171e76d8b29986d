import type { Request } from 'express';
import type { ShownKey } from '../views/keys.view';
import type { ShownSecret } from '../views/webhooks.view';
import type { Environment } from '../../shared/domain/environment';

declare module 'express-session' {
  interface SessionData {
    /** A key just issued, shown on the next keys page and then gone: a reload never shows it again. */
    issuedKey?: IssuedKeyFlash;
    /** Recovery codes just made, shown on the next two-factor page and then gone. */
    recoveryCodes?: { codes: string[]; until: number };
    /** An invitation link just made, shown on the next team page and then gone. */
    invitationLink?: { link: string; email: string; until: number };
    /** A webhook endpoint's signing secret just made (added or rotated), shown on the page `path` and then gone. */
    webhookSecret?: WebhookSecretFlash & { until: number };
  }
}

/** How long an issued key waits in the session for its page. */
const FLASH_MS = 10 * 60_000;

export interface IssuedKeyFlash {
  environment: Environment;
  shown: ShownKey;
  message: string;
  until: number;
}

const save = (req: Request) => new Promise<void>((resolve, reject) => req.session.save((e) => (e ? reject(e) : resolve())));

/**
 * Keeps a just-issued key in the session for the page the browser is redirected to. Saved before
 * the answer, so the page that follows (or a repeated submission's redirect) finds it.
 */
export async function flashIssuedKey(req: Request, flash: Omit<IssuedKeyFlash, 'until'>, now: number): Promise<void> {
  req.session.issuedKey = { ...flash, until: now + FLASH_MS };
  await save(req);
}

/** The key flashed for `environment`'s page, taken out of the session: shown this once. */
export function takeIssuedKey(req: Request, environment: Environment, now: number): IssuedKeyFlash | undefined {
  const flash = req.session.issuedKey;
  if (!flash || flash.environment !== environment) return undefined;
  delete req.session.issuedKey;
  return flash.until > now ? flash : undefined;
}

/** Keeps recovery codes just made for the two-factor page the browser is redirected to. */
export async function flashRecoveryCodes(req: Request, codes: string[], now: number): Promise<void> {
  req.session.recoveryCodes = { codes, until: now + FLASH_MS };
  await save(req);
}

/** The recovery codes flashed, taken out of the session: shown this once. */
export function takeRecoveryCodes(req: Request, now: number): string[] | undefined {
  const flash = req.session.recoveryCodes;
  if (!flash) return undefined;
  delete req.session.recoveryCodes;
  return flash.until > now ? flash.codes : undefined;
}

/** Keeps an invitation link just made for the team page the browser is redirected to. */
export async function flashInvitationLink(req: Request, invitation: { link: string; email: string }, now: number): Promise<void> {
  req.session.invitationLink = { ...invitation, until: now + FLASH_MS };
  await save(req);
}

/** The invitation link flashed, taken out of the session: shown this once. */
export function takeInvitationLink(req: Request, now: number): { link: string; email: string } | undefined {
  const flash = req.session.invitationLink;
  if (!flash) return undefined;
  delete req.session.invitationLink;
  return flash.until > now ? { link: flash.link, email: flash.email } : undefined;
}

export interface WebhookSecretFlash {
  /** The page that shows it (the environment's list after an add, the endpoint's page after a rotation). */
  path: string;
  shown: ShownSecret;
  message: string;
}

/** Keeps a signing secret just made for the page the browser is redirected to. */
export async function flashWebhookSecret(req: Request, flash: WebhookSecretFlash, now: number): Promise<void> {
  req.session.webhookSecret = { ...flash, until: now + FLASH_MS };
  await save(req);
}

/** The signing secret flashed for the page at `path`, taken out of the session: shown this once. */
export function takeWebhookSecret(req: Request, path: string, now: number): WebhookSecretFlash | undefined {
  const flash = req.session.webhookSecret;
  if (!flash || flash.path !== path) return undefined;
  delete req.session.webhookSecret;
  return flash.until > now ? { path: flash.path, shown: flash.shown, message: flash.message } : undefined;
}
