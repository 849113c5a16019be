import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { InvitationView } from '../../services/identity/invitations-service.js';
import type { AppDeps } from '../../http/app-deps.js';
import { requestContext } from '../../http/request-context.js';
import { pageRefusal, publicCsrf, sendPage } from '../context.js';
import { dashboardCookies } from '../cookies.js';
import { formErrors } from '../form-validation.js';
import { FormBody, FormText } from '../schemas.js';
import { CsrfField, errorFor, Field, type FormError } from '../views/components.js';
import { Layout } from '../views/layout.js';
import { enterSession, NewPasswordField, publicResponses, TokenParams } from './auth.js';
import { RedirectPage } from './sso.js';

// `email` is the read-only field the browser sends along; the invitation decides the address, not the form.
// `with=sso` is "Accept with single sign-on" (its own form, posting to the same address).
const AcceptForm = FormBody({ email: FormText(1024), name: FormText(1024), password: FormText(4096), with: Type.Optional(Type.Literal('sso')) });

type OpenInvitation = Extract<InvitationView, { state: 'open' }>;

/** "Accept with single sign-on": also posts to the page's own address, so the token is not written into the page. */
function SsoAcceptForm({ csrf, invitation }: { csrf: string; invitation: OpenInvitation }) {
  return (
    <form method="post" class="panel">
      <CsrfField token={csrf} />
      <input type="hidden" name="with" value="sso" />
      <p>
        {invitation.sso === 'required'
          ? `${invitation.organizationName} signs in with single sign-on. Sign in at your organisation's identity provider as ${invitation.email} to accept.`
          : `Or sign in at ${invitation.organizationName}'s identity provider as ${invitation.email}: no password needed here.`}
      </p>
      <button type="submit" class={invitation.sso === 'required' ? 'button' : 'button secondary'}>
        Accept with single sign-on
      </button>
    </form>
  );
}

function InvitationForm({ invitation, csrf, name, errors }: { invitation: OpenInvitation; csrf: string; name?: string; errors?: FormError[] }) {
  if (invitation.sso === 'required') {
    return (
      <Layout title={`Join ${invitation.organizationName}`} errors={errors}>
        <p id="intro">
          You have been invited as <strong>{invitation.role}</strong>. You are signed in to the dashboard once you accept.
        </p>
        <SsoAcceptForm csrf={csrf} invitation={invitation} />
      </Layout>
    );
  }
  return (
    <Layout title={`Join ${invitation.organizationName}`} errors={errors}>
      <p id="intro">
        You have been invited as <strong>{invitation.role}</strong>. Choose your name and a password to activate your account; you are signed
        in to the dashboard afterwards.
      </p>
      {/* No action: the form posts back to this page's own address, so the token is not written into the page. */}
      <form method="post" id="accept" novalidate>
        <CsrfField token={csrf} />
        <Field id="email" label="Email" type="email" value={invitation.email} autocomplete="username" readOnly />
        <Field id="name" label="Your name" value={name} error={errorFor(errors, 'name')} autocomplete="name" maxLength={255} required />
        <NewPasswordField id="password" label="Password" errors={errors} />
        <button id="submit" type="submit">
          Activate account
        </button>
      </form>
      {invitation.sso === 'offered' ? <SsoAcceptForm csrf={csrf} invitation={invitation} /> : null}
    </Layout>
  );
}

const DEAD_PAGES = {
  not_found: {
    status: 404,
    title: 'Invitation not found',
    text: 'This invitation link is not valid. It may have been used already, or replaced by a newer invitation. Check the latest e-mail you received, or ask for a new invite.',
  },
  expired: {
    status: 410,
    title: 'This invitation has expired',
    text: 'Invitation links work for 72 hours. Ask an administrator of the organisation to invite you again; the new e-mail carries a fresh link.',
  },
} as const;

function sendDead(reply: FastifyReply, state: keyof typeof DEAD_PAGES): FastifyReply {
  const { status, title, text } = DEAD_PAGES[state];
  return sendPage(
    reply,
    <Layout title={title}>
      <p class="lead">{text}</p>
      <p class="auth-links">
        <a href="/dashboard/login">Sign in</a>
      </p>
    </Layout>,
    status,
  );
}

/**
 * The invitation page (the e-mailed `/invitations/{token}` redirects here): a plain form, no script needed.
 * Accepting is the same service call as the JSON endpoint, then the invitee is signed in and lands on the
 * dashboard.
 */
export const invitationPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services, config }) => {
  const cookies = dashboardCookies(config);

  app.get('/invitations/:token', { config: { dashboardPublic: true }, schema: { hide: true, params: TokenParams, response: publicResponses } }, async (request, reply) => {
    const view = await services.invitations.view(request.params.token);
    if (view.state !== 'open') return sendDead(reply, view.state);
    return sendPage(reply, <InvitationForm invitation={view} csrf={publicCsrf(request, reply, cookies)} />);
  });

  app.post(
    '/invitations/:token',
    { config: { dashboardPublic: true }, schema: { hide: true, params: TokenParams, body: AcceptForm, response: publicResponses } },
    async (request, reply) => {
      const { token } = request.params;
      const { name = '', password = '' } = request.body;
      try {
        if (request.body.with === 'sso') return await sendPage(reply, <RedirectPage url={await services.sso.startInvitation(token, request.dashboard.csrfSecret!)} />);
        const { session } = await services.accounts.acceptInvitation(token, { name, password }, requestContext(request, 'dashboard'));
        return await enterSession(services, cookies, request, reply, session, '/dashboard');
      } catch (error) {
        const refusal = pageRefusal(reply, error);
        const view = await services.invitations.view(token);
        if (view.state !== 'open') return sendDead(reply, view.state);
        const errors = formErrors(refusal, { name: 'Your name', password: 'Password' });
        const page = <InvitationForm invitation={view} csrf={publicCsrf(request, reply, cookies)} name={name} errors={errors} />;
        return sendPage(reply, page, refusal.status);
      }
    },
  );
};
