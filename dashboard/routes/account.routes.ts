import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { MAX_PASSWORD_LENGTH, newPasswordSchema } from '../../shared/dashboard-users/password';
import { AppError } from '../../shared/errors/app-error';
import { auditViewer, viewerActor } from '../audit';
import { requireOwner, requireViewer, viewerOf } from '../auth/current-user';
import type { DashboardDeps } from '../dependencies';
import { flashRecoveryCodes, takeRecoveryCodes } from '../http/flash';
import { formBody, parseForm } from '../http/form';
import { requestGuards } from '../http/request-guards';
import type { PasswordCheck } from '../services/passwords.service';
import { passwordPage, sessionsPage, twoFactorPage, type Message, type TwoFactorPageInput } from '../views/account.view';
import { doneText } from '../views/query-notices';

type AccountDeps = Pick<DashboardDeps, 'viewers' | 'audit' | 'countryOf' | 'passwords' | 'twoFactor' | 'userSessions' | 'clock'>;

const passwordForm = z.object({
  current: z.string().max(MAX_PASSWORD_LENGTH),
  next: z.string().max(MAX_PASSWORD_LENGTH),
  confirm: z.string().max(MAX_PASSWORD_LENGTH),
});
const codeForm = z.object({ code: z.string().max(100) });
const disableForm = z.object({ password: z.string().max(MAX_PASSWORD_LENGTH) });
const requireForm = z.object({ required: z.enum(['yes', 'no']) });

/** What a finished action says on the page it redirects to (`?done=`). */
const DONE: Record<string, string> = {
  'password-changed': 'Your password is changed; your other sessions have ended.',
  'two-factor-off': 'Two-factor sign-in is off; your other sessions have ended.',
  required: 'Every user of this account now needs two-factor sign-in.',
  optional: 'Two-factor sign-in is now optional for this account.',
  'ended-others': 'Your other sessions have ended.',
};

const doneMessage = (req: Request): Message | undefined => {
  const text = doneText(req.query, DONE);
  return text ? { kind: 'success', text } : undefined;
};

const save = (req: Request) => new Promise<void>((resolve, reject) => req.session.save((e) => (e ? reject(e) : resolve())));

/** A refused password or code as the status it is, with the page again and its message. */
function refused(
  res: Response,
  check: Exclude<PasswordCheck, { outcome: 'right' }> | { outcome: 'wrong-code' },
): { status: number; message: Message } {
  switch (check.outcome) {
    case 'throttled':
      res.setHeader('Retry-After', String(check.retryAfterSeconds));
      return {
        status: 429,
        message: { kind: 'error', text: `Too many wrong tries; try again in ${Math.ceil(check.retryAfterSeconds / 60)} min` },
      };
    case 'busy':
      res.setHeader('Retry-After', '1');
      return { status: 429, message: { kind: 'error', text: 'Too busy to check the password right now; try again in a moment' } };
    case 'wrong-code':
      return { status: 401, message: { kind: 'error', text: 'That code is not right; type the one the app shows now' } };
    default:
      return { status: 401, message: { kind: 'error', text: 'The password is not correct' } };
  }
}

/**
 * The signed-in user's own sign-in: two-factor sign-in (set up, turned off with the password,
 * required of the whole account by an owner), their password, and their sessions. Every form
 * is a POST with the CSRF token; a success redirects (303) to the page with what was done.
 */
export function accountRoutes(deps: AccountDeps): Router {
  const router = Router();
  const viewer = requireViewer(deps.viewers);
  // Enrolment stays open to users the account requires it of; nothing else does until they have.
  const enrolling = requireViewer(deps.viewers, { beforeTwoFactor: true });

  const showTwoFactor = async (req: Request, res: Response, status: number, extra: Partial<TwoFactorPageInput> = {}) => {
    const v = viewerOf(res);
    const twoFactorStatus = await deps.twoFactor.status(v.user);
    const sealed = req.session.enrolment;
    const enrolment = !twoFactorStatus.enabled && sealed && !extra.recoveryCodes ? await deps.twoFactor.resume(v.user, sealed) : undefined;
    res.setHeader('Cache-Control', 'no-store');
    res.status(status).send(twoFactorPage({ viewer: v, status: twoFactorStatus, enrolment, message: doneMessage(req), ...extra }));
  };

  router.get('/account', viewer, (_req, res) => res.redirect(303, '/account/two-factor'));
  router.get('/account/two-factor', enrolling, async (req, res) => {
    const recoveryCodes = takeRecoveryCodes(req, deps.clock());
    await showTwoFactor(req, res, 200, recoveryCodes ? { recoveryCodes } : {});
  });

  router.post('/account/two-factor/enrol', enrolling, formBody, requestGuards, async (req, res) => {
    const v = viewerOf(res);
    if (v.user.twoFactorSince !== null) return res.redirect(303, '/account/two-factor');
    // The secret waits in the session, sealed, until a code confirms the app has it.
    req.session.enrolment = (await deps.twoFactor.begin(v.user)).sealed;
    await save(req);
    res.redirect(303, '/account/two-factor');
  });

  router.post('/account/two-factor/confirm', enrolling, formBody, requestGuards, async (req, res) => {
    const v = viewerOf(res);
    const sealed = req.session.enrolment;
    if (!sealed || v.user.twoFactorSince !== null) return res.redirect(303, '/account/two-factor');
    const { code } = parseForm(codeForm, req);
    const result = await deps.twoFactor.confirm(viewerActor(deps, req, res), sealed, code, req.sessionID);
    // A confirmation sent twice at once: the first turned it on and shows its recovery codes.
    if (result.outcome === 'already-on') return res.redirect(303, '/account/two-factor');
    if (result.outcome !== 'enabled') {
      const { status, message } = refused(res, result.outcome === 'wrong' ? { outcome: 'wrong-code' } : result);
      return showTwoFactor(req, res, status, { message });
    }
    delete req.session.enrolment;
    // Shown once, on the page redirected to: only their hashes are kept, and a reload (or the
    // back button) asks for that page again without them, instead of sending the code again.
    await flashRecoveryCodes(req, result.recoveryCodes, deps.clock());
    res.redirect(303, '/account/two-factor');
  });

  router.post('/account/two-factor/disable', viewer, formBody, requestGuards, async (req, res) => {
    const { password } = parseForm(disableForm, req);
    const result = await deps.twoFactor.disable(viewerActor(deps, req, res), password, req.sessionID);
    if (result.outcome !== 'disabled') {
      const { status, message } = refused(res, result);
      return showTwoFactor(req, res, status, { message });
    }
    res.redirect(303, '/account/two-factor?done=two-factor-off');
  });

  router.post('/account/two-factor/require', viewer, formBody, requestGuards, requireOwner, async (req, res) => {
    const { required } = parseForm(requireForm, req);
    const v = viewerOf(res);
    // An owner without it would be sent to set it up at once: they set it up first, knowingly.
    if (required === 'yes' && v.user.twoFactorSince === null) {
      throw new AppError('VALIDATION_ERROR', 'Turn on two-factor sign-in for yourself before requiring it of everyone');
    }
    await deps.twoFactor.setRequired(viewerActor(deps, req, res), required === 'yes');
    res.redirect(303, `/account/two-factor?done=${required === 'yes' ? 'required' : 'optional'}`);
  });

  router.get('/account/password', viewer, (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.send(passwordPage({ viewer: viewerOf(res), message: doneMessage(req) }));
  });

  router.post('/account/password', viewer, formBody, requestGuards, async (req, res) => {
    const form = parseForm(passwordForm, req);
    const again = (status: number, message: Message) => res.status(status).send(passwordPage({ viewer: viewerOf(res), message }));
    const next = newPasswordSchema.safeParse(form.next);
    if (!next.success) return again(400, { kind: 'error', text: `The new password must be ${next.error.issues[0]!.message}` });
    if (form.next !== form.confirm) return again(400, { kind: 'error', text: 'The new password and its repetition differ' });
    const result = await deps.passwords.change(viewerActor(deps, req, res), form.current, next.data, req.sessionID);
    if (result.outcome !== 'changed') {
      const { status, message } = refused(res, result);
      return again(status, message);
    }
    // This session carries the new stamp; sessions begun before the change end.
    req.session.userStamp = result.user.updatedAt;
    await save(req);
    res.redirect(303, '/account/password?done=password-changed');
  });

  router.get('/account/sessions', viewer, async (req, res) => {
    const v = viewerOf(res);
    res.setHeader('Cache-Control', 'no-store');
    res.send(
      sessionsPage({
        viewer: v,
        sessions: await deps.userSessions.list({ sessionId: req.sessionID, userId: v.user.id }),
        message: doneMessage(req),
      }),
    );
  });

  router.post('/account/sessions/end-others', viewer, formBody, requestGuards, async (req, res) => {
    await deps.userSessions.endOthers({ sessionId: req.sessionID, userId: viewerOf(res).user.id });
    await auditViewer(deps, { req, res, action: 'session.end-others' });
    res.redirect(303, '/account/sessions?done=ended-others');
  });

  return router;
}
