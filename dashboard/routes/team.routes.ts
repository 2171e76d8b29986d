import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { emailSchema } from '../../shared/dashboard-users/email';
import { AppError } from '../../shared/errors/app-error';
import { MAX_PASSWORD_LENGTH, newPasswordSchema } from '../../shared/dashboard-users/password';
import { viewerActor } from '../audit';
import { requireOwner, requireViewer, viewerOf } from '../auth/current-user';
import type { DashboardDeps } from '../dependencies';
import { flashInvitationLink, takeInvitationLink } from '../http/flash';
import { formBody, parseForm } from '../http/form';
import { refusedForm } from '../http/refused-form';
import { submitOnce } from '../http/submit-once';
import { requestGuards } from '../http/request-guards';
import { DEFAULT_LANDING } from '../http/return-to';
import { repeatState } from '../services/form-tokens.service';
import { roleSchema, type MemberChange } from '../services/team.service';
import { doneText, withRepeatNotice } from '../views/query-notices';
import type { Html } from '../views/html';
import { acceptPage, confirmRemovalPage, linkRefused, teamPage, type TeamPageInput } from '../views/team.view';
import { completeSignIn, signInToken, type SessionDeps } from './session.routes';

type TeamDeps = Pick<DashboardDeps, 'viewers' | 'team' | 'formTokens' | 'countryOf' | 'clock'> &
  Pick<SessionDeps, 'userSessions' | 'signIns' | 'devices' | 'session'>;

const inviteForm = z.object({
  _csrf: z.string(),
  _once: z.string().optional(),
  email: z.string().max(1000),
  role: roleSchema,
});
const roleForm = z.object({ _csrf: z.string(), role: roleSchema });
const actionForm = z.object({ _csrf: z.string() });
const acceptForm = z.object({
  _csrf: z.string(),
  password: z.string().max(MAX_PASSWORD_LENGTH),
  confirm: z.string().max(MAX_PASSWORD_LENGTH),
});

const DONE: Record<string, string> = {
  revoked: 'Invitation revoked: its link no longer works.',
  'role-changed': 'Role changed; that member was signed out everywhere.',
  removed: 'Member removed; they were signed out everywhere.',
};
const LAST_OWNER = 'The account must keep at least one owner: make someone else an owner first.';
const NOT_A_MEMBER = 'No such member of this account';

/** A refusal found by the service: the team page again, with its status and message. */
class Refused extends Error {
  constructor(
    readonly status: number,
    readonly text: string,
  ) {
    super(text);
  }
}

const refusedChange = (change: Exclude<MemberChange, { outcome: 'done' }>): Refused =>
  change.outcome === 'last-owner' ? new Refused(409, LAST_OWNER) : new Refused(404, NOT_A_MEMBER);

/**
 * The account's team: members listed to everyone signed in; invitations, role changes and
 * removals for owners. Plus the invitee's side: the link's page, where they choose a password
 * and are signed in as the account's new user.
 */
export function teamRoutes(deps: TeamDeps): Router {
  const router = Router();
  const viewer = requireViewer(deps.viewers);
  const change = [viewer, formBody, requestGuards, requireOwner];

  const render = async (res: Response, status: number, input: Partial<Omit<TeamPageInput, 'viewer' | 'members' | 'now'>> = {}) => {
    const v = viewerOf(res);
    const [members, invitations] = await Promise.all([
      deps.team.members(v.account.id),
      // Viewers see who is in the account, not who is being invited.
      v.user.role === 'owner' ? deps.team.invitations(v.account.id) : Promise.resolve([]),
    ]);
    res.setHeader('Cache-Control', 'no-store');
    res.status(status).send(teamPage({ invitations, ...input, viewer: v, members, now: deps.clock() }));
  };

  /** Runs a change; a refusal the service found is the page again with its status. */
  const attempt = async (req: Request, res: Response, act: () => Promise<string>) => {
    try {
      res.redirect(303, await act());
    } catch (error) {
      if (!(error instanceof Refused)) throw error;
      await render(res, error.status, {
        message: { kind: 'error', text: error.text },
        form: req.path === '/account/team/invite' ? (req.body as TeamPageInput['form']) : undefined,
      });
    }
  };

  /**
   * `attempt`, once per one-time form token: a repeat (a double click, a reload of the POST)
   * acts not again and goes where the first submission went, and the page says so.
   */
  const attemptOnce = (req: Request, res: Response, act: () => Promise<string>) =>
    attempt(req, res, () => submitOnce(deps.formTokens, req, res, '/account/team', act));

  router.get('/account/team', viewer, async (req, res) => {
    const invited = takeInvitationLink(req, deps.clock());
    const text = doneText(req.query, DONE);
    let message: TeamPageInput['message'] = text ? { kind: 'success', text } : undefined;
    if (invited) message = { kind: 'success', text: `Invitation for ${invited.email} created.` };
    await render(res, 200, { invited, message: withRepeatNotice(repeatState(req.query), message) });
  });

  // Sent twice (a reload, a double click), it invites once: the one-time token.
  router.post('/account/team/invite', ...change, (req, res) => {
    const form = parseForm(inviteForm, req);
    const email = emailSchema.safeParse(form.email);
    return attemptOnce(req, res, async () => {
      if (!email.success) throw new Refused(400, 'Enter the email address of the person to invite');
      const result = await deps.team.invite(viewerActor(deps, req, res), email.data, form.role);
      if (result.outcome !== 'invited') {
        throw new Refused(
          409,
          result.outcome === 'already-user'
            ? `${email.data} already has a dashboard user; they can sign in`
            : `${email.data} is already invited; revoke that invitation to make a new link`,
        );
      }
      const link = `${req.protocol}://${req.get('host')}/invite/${result.token}`;
      await flashInvitationLink(req, { link, email: email.data }, deps.clock());
      return '/account/team';
    });
  });

  router.post('/account/team/invitations/:id/revoke', ...change, (req, res) =>
    attemptOnce(req, res, async () => {
      parseForm(actionForm, req);
      const revoked = await deps.team.revoke(viewerActor(deps, req, res), String(req.params.id));
      if (!revoked) throw new Refused(404, 'No such invitation is waiting: it was used, revoked or never made here');
      return '/account/team?done=revoked';
    }),
  );

  router.post('/account/team/members/:userId/role', ...change, (req, res) =>
    attemptOnce(req, res, async () => {
      const { role } = parseForm(roleForm, req);
      const result = await deps.team.changeRole(viewerActor(deps, req, res), String(req.params.userId), role);
      if (result.outcome !== 'done') throw refusedChange(result);
      return '/account/team?done=role-changed';
    }),
  );

  // Asks first, on a page of its own: a stray click on the list removes no one.
  router.get('/account/team/members/:userId/remove', viewer, requireOwner, async (req, res) => {
    const member = await deps.team.member({ accountId: viewerOf(res).account.id, userId: String(req.params.userId) });
    if (!member) throw new AppError('NOT_FOUND', NOT_A_MEMBER);
    res.setHeader('Cache-Control', 'no-store');
    res.send(confirmRemovalPage({ viewer: viewerOf(res), member }));
  });

  router.post('/account/team/members/:userId/remove', ...change, (req, res) =>
    attemptOnce(req, res, async () => {
      parseForm(actionForm, req);
      const result = await deps.team.remove(viewerActor(deps, req, res), String(req.params.userId));
      if (result.outcome !== 'done') throw refusedChange(result);
      return '/account/team?done=removed';
    }),
  );

  router.use(
    refusedForm(async (req, res, refusal: Html) => {
      if (!req.path.startsWith('/account/team')) return false;
      await render(res, res.statusCode, { message: { kind: 'error', text: refusal } });
      return true;
    }),
  );

  /**
   * The link's page: its token is in the path, so the page is neither cached nor sent on as a
   * referrer (only the origin is). Not `no-referrer`: under it browsers send `Origin: null` with
   * the page's own form, which the request guards refuse as another origin.
   */
  const linkHeaders = (res: Response) => {
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Referrer-Policy', 'strict-origin');
  };

  router.get('/invite/:token', async (req, res) => {
    linkHeaders(res);
    const opened = await deps.team.open(String(req.params.token));
    if (opened.outcome !== 'open') {
      const refused = linkRefused(opened.outcome);
      return res.status(refused.status).send(refused.body);
    }
    res.send(
      acceptPage({
        csrfToken: signInToken(req, deps.session.idleMs),
        token: String(req.params.token),
        invitation: opened.invitation,
        accountName: opened.accountName,
      }),
    );
  });

  router.post('/invite/:token', formBody, requestGuards, async (req, res) => {
    linkHeaders(res);
    const token = String(req.params.token);
    const opened = await deps.team.open(token);
    if (opened.outcome !== 'open') {
      const refused = linkRefused(opened.outcome);
      return res.status(refused.status).send(refused.body);
    }
    const again = (status: number, error: string) =>
      res.status(status).send(
        acceptPage({
          csrfToken: signInToken(req, deps.session.idleMs),
          token,
          invitation: opened.invitation,
          accountName: opened.accountName,
          error,
        }),
      );
    const form = acceptForm.safeParse(req.body ?? {});
    if (!form.success) return again(400, 'Enter a password and repeat it');
    // The same rule as every other password: the CLI's and a change of password.
    const password = newPasswordSchema.safeParse(form.data.password);
    if (!password.success) return again(400, `The password must be ${password.error.issues[0]!.message}`);
    if (form.data.password !== form.data.confirm) return again(400, 'The password and its repetition differ');
    const accepted = await deps.team.accept(token, password.data, deps.countryOf(req.ip));
    if (accepted.outcome === 'email-taken') return again(409, `${opened.invitation.email} already has a dashboard user; sign in instead`);
    if (accepted.outcome !== 'accepted') {
      const refused = linkRefused(accepted.outcome);
      return res.status(refused.status).send(refused.body);
    }
    await completeSignIn(deps, req, res, { user: accepted.user, landing: DEFAULT_LANDING });
  });

  return router;
}
