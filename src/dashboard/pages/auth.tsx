import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { linkExpired, linkNotFound, type OrganizationChoice } from '../../services/identity/accounts-service.js';
import type { Services } from '../../services/index.js';
import type { StartedSession } from '../../services/identity/sessions-service.js';
import type { AppDeps } from '../../http/app-deps.js';
import { requestContext } from '../../http/request-context.js';
import { pageRefusal, publicCsrf, safeDashboardPath, seeOther, sendPage } from '../context.js';
import { dashboardCookies, type DashboardCookies } from '../cookies.js';
import { formErrors } from '../form-validation.js';
import { FormBody, FormText, HtmlPage, htmlResponses } from '../schemas.js';
import { ActionForm, CsrfField, errorFor, Field, type FormError } from '../views/components.js';
import { Layout, PASSKEY_SCRIPTS } from '../views/layout.js';

/** Pages before sign-in answer 401 (wrong credentials) and 410 (an expired link) besides the usual. */
export const publicResponses = {
  ...htmlResponses,
  401: HtmlPage('The sign-in page again: email or password is incorrect.'),
  410: HtmlPage('The link or sign-in has expired.'),
};

export const publicPage = { dashboardPublic: true } as const;

const LoginQuery = Type.Object(
  { next: Type.Optional(Type.String({ maxLength: 2048 })), signed_out: Type.Optional(Type.Literal('1')) },
  { additionalProperties: false },
);
const LoginBody = FormBody({ email: FormText(1024), password: FormText(4096), next: FormText(2048) });
const ChooseBody = FormBody({ token: FormText(128), organization: FormText(128), next: FormText(2048) });
const ForgotQuery = Type.Object({ sent: Type.Optional(Type.Literal('1')) }, { additionalProperties: false });
const ForgotBody = FormBody({ email: FormText(1024) });
/** Named `token` so the request log masks it (app.ts `loggableUrl`). */
export const TokenParams = Type.Object({ token: Type.String({ maxLength: 512 }) });
const PasswordBody = FormBody({ password: FormText(4096) });

export const FORGOT_SENT = 'If that address belongs to an account, a link is on its way';

/**
 * Sets the new session's cookie and goes on. A session this browser already had ends first (signed out
 * on every instance), so one browser holds one session.
 */
export async function enterSession(
  services: Services,
  cookies: DashboardCookies,
  request: FastifyRequest,
  reply: FastifyReply,
  session: StartedSession,
  next: string,
): Promise<FastifyReply> {
  const previous = request.dashboard.session ?? request.dashboard.pending;
  if (previous && previous.sessionId !== session.sessionId) await services.sessions.end(previous.actor);
  cookies.setSession(reply, session.token, session.expiresAt);
  const target = safeDashboardPath(next) ?? '/dashboard';
  // The password (or a link) was right and the user has a second factor: it is asked for next (DASHBOARD 11).
  if (session.stage === 'two_step') return seeOther(reply, `/dashboard/login/two-step${target === '/dashboard' ? '' : `?next=${encodeURIComponent(target)}`}`);
  return seeOther(reply, target);
}

/**
 * "Sign in with a passkey" (DASHBOARD 11): a discoverable credential, no e-mail typed. The button needs
 * JavaScript and stays hidden without it; the page script fills `response` and sends the form.
 */
function PasskeySignIn({ csrf, next }: { csrf: string; next: string | null }) {
  return (
    <form method="post" action="/dashboard/login/passkey" class="passkey-sign-in" data-passkey-auth="/dashboard/login/passkey/options" data-passkey-field="response">
      <CsrfField token={csrf} />
      {next ? <input type="hidden" name="next" value={next} /> : null}
      <input type="hidden" name="response" value="" />
      <button type="button" class="button secondary" data-passkey-button hidden>
        Sign in with a passkey
      </button>
    </form>
  );
}

export function NewPasswordField({ id, label, errors, hint = '8 to 1,024 characters.', autofocus }: { id: string; label: string; errors?: FormError[] | undefined; hint?: string; autofocus?: boolean }) {
  return <Field id={id} label={label} type="password" error={errorFor(errors, id)} hint={hint} autocomplete="new-password" required autofocus={autofocus} />;
}

export function LoginPage({ csrf, next, email, errors, notice }: { csrf: string; next: string | null; email?: string; errors?: FormError[]; notice?: string | null }) {
  return (
    <Layout title="Sign in" errors={errors} notice={notice} scripts={PASSKEY_SCRIPTS}>
      <form method="post" action="/dashboard/login">
        <CsrfField token={csrf} />
        {next ? <input type="hidden" name="next" value={next} /> : null}
        <Field id="email" label="Email" type="email" value={email} error={errorFor(errors, 'email')} autocomplete="username" required autofocus />
        <Field id="password" label="Password" type="password" error={errorFor(errors, 'password')} autocomplete="current-password" required />
        <button type="submit">Sign in</button>
      </form>
      <PasskeySignIn csrf={csrf} next={next} />
      <p class="auth-links">
        <a href={next ? `/dashboard/login/sso?next=${encodeURIComponent(next)}` : '/dashboard/login/sso'}>Sign in with single sign-on</a>
      </p>
      <p class="auth-links">
        <a href="/dashboard/forgot-password">Forgot password?</a>
      </p>
    </Layout>
  );
}

function ChooserPage({ csrf, token, next, organizations }: { csrf: string; token: string; next: string | null; organizations: OrganizationChoice[] }) {
  return (
    <Layout title="Choose an organisation">
      <p class="lead">Your email and password belong to more than one organisation. Which one do you want to open?</p>
      <ul class="actions">
        {organizations.map((org) => (
          <li>
            <ActionForm action="/dashboard/login/choose" csrf={csrf} label={org.name} hidden={{ token, organization: org.id, ...(next ? { next } : {}) }} />
          </li>
        ))}
      </ul>
      <p class="auth-links">
        <a href="/dashboard/login">Sign in with another account</a>
      </p>
    </Layout>
  );
}

function ForgotPage({ csrf, email, errors, notice }: { csrf: string; email?: string; errors?: FormError[]; notice?: string | null }) {
  return (
    <Layout title="Forgot password" errors={errors} notice={notice}>
      <p>Enter the email address of your account. We send a link to choose a new password; it works once, for 1 hour.</p>
      <form method="post" action="/dashboard/forgot-password">
        <CsrfField token={csrf} />
        <Field id="email" label="Email" type="email" value={email} error={errorFor(errors, 'email')} autocomplete="username" required />
        <button type="submit">Send reset link</button>
      </form>
      <p class="auth-links">
        <a href="/dashboard/login">Back to sign in</a>
      </p>
    </Layout>
  );
}

function PasswordPage({ csrf, email, organizationName, setup, errors }: { csrf: string; email: string; organizationName: string; setup: boolean; errors?: FormError[] }) {
  return (
    <Layout title={setup ? 'Choose your password' : 'Choose a new password'} errors={errors}>
      <p>
        For <strong>{email}</strong> in {organizationName}. You will be signed in afterwards; any other session of this account ends.
      </p>
      {/* No action: the form posts back to this page's own address, so the token is not written into the page. */}
      <form method="post">
        <CsrfField token={csrf} />
        <NewPasswordField id="password" label="New password" errors={errors} autofocus />
        <button type="submit">Save password</button>
      </form>
    </Layout>
  );
}

/**
 * Signing in (DASHBOARD 2): the sign-in form, the organisation chooser, "Forgot password?" and the
 * password links. Every page here is open without a session; the accounts service decides everything.
 */
export const authPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services, config }) => {
  const cookies = dashboardCookies(config);
  const accounts = services.accounts;

  app.get('/login', { config: publicPage, schema: { hide: true, querystring: LoginQuery, response: publicResponses } }, async (request, reply) => {
    if (request.dashboard.session) return seeOther(reply, '/dashboard');
    const next = safeDashboardPath(request.query.next);
    const notice = request.query.signed_out ? 'You have signed out.' : null;
    return sendPage(reply, <LoginPage csrf={publicCsrf(request, reply, cookies)} next={next} notice={notice} />);
  });

  app.post('/login', { config: publicPage, schema: { hide: true, body: LoginBody, response: publicResponses } }, async (request, reply) => {
    const { email = '', password = '' } = request.body;
    const next = safeDashboardPath(request.body.next);
    try {
      const result = await accounts.signIn(email, password, requestContext(request, 'dashboard'));
      if (result.kind === 'session') return await enterSession(services, cookies, request, reply, result.session, next ?? '/dashboard');
      const csrf = publicCsrf(request, reply, cookies);
      return sendPage(reply, <ChooserPage csrf={csrf} token={result.token} next={next} organizations={result.organizations} />);
    } catch (error) {
      const refusal = pageRefusal(reply, error);
      const errors = formErrors(refusal, { email: 'Email', password: 'Password' });
      return sendPage(reply, <LoginPage csrf={publicCsrf(request, reply, cookies)} next={next} email={email} errors={errors} />, refusal.status);
    }
  });

  app.post('/login/choose', { config: publicPage, schema: { hide: true, body: ChooseBody, response: publicResponses } }, async (request, reply) => {
    const { token = '', organization = '' } = request.body;
    const next = safeDashboardPath(request.body.next);
    try {
      const session = await accounts.chooseOrganization(token, organization, requestContext(request, 'dashboard'));
      return await enterSession(services, cookies, request, reply, session, next ?? '/dashboard');
    } catch (error) {
      const refusal = pageRefusal(reply, error);
      return sendPage(reply, <LoginPage csrf={publicCsrf(request, reply, cookies)} next={next} errors={formErrors(refusal)} />, refusal.status);
    }
  });

  app.get('/forgot-password', { config: publicPage, schema: { hide: true, querystring: ForgotQuery, response: publicResponses } }, async (request, reply) => {
    const notice = request.query.sent ? FORGOT_SENT : null;
    return sendPage(reply, <ForgotPage csrf={publicCsrf(request, reply, cookies)} notice={notice} />);
  });

  app.post('/forgot-password', { config: publicPage, schema: { hide: true, body: ForgotBody, response: publicResponses } }, async (request, reply) => {
    const { email = '' } = request.body;
    try {
      await accounts.forgotPassword(email, requestContext(request, 'dashboard'));
      return seeOther(reply, '/dashboard/forgot-password?sent=1');
    } catch (error) {
      const refusal = pageRefusal(reply, error);
      return sendPage(reply, <ForgotPage csrf={publicCsrf(request, reply, cookies)} email={email} errors={formErrors(refusal, { email: 'Email' })} />, refusal.status);
    }
  });

  app.get('/password/:token', { config: publicPage, schema: { hide: true, params: TokenParams, response: publicResponses } }, async (request, reply) => {
    const view = await accounts.viewPasswordLink(request.params.token);
    if (view.state === 'not_found') throw linkNotFound();
    if (view.state === 'expired') throw linkExpired();
    const csrf = publicCsrf(request, reply, cookies);
    return sendPage(reply, <PasswordPage csrf={csrf} email={view.email} organizationName={view.organizationName} setup={view.purpose === 'setup'} />);
  });

  app.post('/password/:token', { config: publicPage, schema: { hide: true, params: TokenParams, body: PasswordBody, response: publicResponses } }, async (request, reply) => {
    const { token } = request.params;
    try {
      const session = await accounts.setPassword(token, request.body.password ?? '', requestContext(request, 'dashboard'));
      return await enterSession(services, cookies, request, reply, session, '/dashboard');
    } catch (error) {
      // A dead link is its page (404, 410); a refused password shows the form again.
      const refusal = pageRefusal(reply, error, [400]);
      const view = await accounts.viewPasswordLink(token);
      if (view.state !== 'open') throw view.state === 'expired' ? linkExpired() : linkNotFound();
      const errors = formErrors(refusal, { password: 'New password' });
      const page = <PasswordPage csrf={publicCsrf(request, reply, cookies)} email={view.email} organizationName={view.organizationName} setup={view.purpose === 'setup'} errors={errors} />;
      return sendPage(reply, page, refusal.status);
    }
  });
};
