import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../errors.js';
import type { FactorsOf, TwoStepProof } from '../../services/identity/two-step-service.js';
import type { AppDeps } from '../../http/app-deps.js';
import { requestContext } from '../../http/request-context.js';
import { pageContext, pageRefusal, publicCsrf, safeDashboardPath, seeOther, sendPage } from '../context.js';
import { dashboardCookies } from '../cookies.js';
import { formErrors } from '../form-validation.js';
import { FormBody, FormText } from '../schemas.js';
import { CsrfField, Disclosure, errorFor, Field, type FormError } from '../views/components.js';
import { Layout, PASSKEY_SCRIPTS } from '../views/layout.js';
import { enterSession, LoginPage, publicPage, publicResponses } from './auth.js';

const TwoStepQuery = Type.Object({ next: Type.Optional(Type.String({ maxLength: 2048 })) }, { additionalProperties: false });
const TwoStepBody = FormBody({ code: FormText(64), recovery_code: FormText(64), response: FormText(16_384), next: FormText(2048) });
const PasskeyBody = FormBody({ response: FormText(16_384), next: FormText(2048) });
/** A ceremony's options, as the browser library takes them. */
const CeremonyOptions = Type.Object({}, { additionalProperties: true, description: 'WebAuthn options (PublicKeyCredentialRequestOptionsJSON).' });
const jsonResponses = { 200: CeremonyOptions };

function TwoStepPage({ csrf, next, factors, errors }: { csrf: string; next: string | null; factors: FactorsOf; errors?: FormError[] | undefined }) {
  const nextField = next ? <input type="hidden" name="next" value={next} /> : null;
  const recoveryError = errorFor(errors, 'recovery_code');
  return (
    <Layout title="Two-step verification" errors={errors} scripts={factors.passkey ? PASSKEY_SCRIPTS : undefined}>
      {factors.code ? (
        <form method="post" action="/dashboard/login/two-step" class="panel">
          <CsrfField token={csrf} />
          {nextField}
          <Field id="code" label="Code" error={errorFor(errors, 'code')} autocomplete="one-time-code" hint="The 6-digit code your authenticator app shows now." required autofocus />
          <button type="submit">Verify</button>
        </form>
      ) : null}
      {factors.passkey ? (
        <form method="post" action="/dashboard/login/two-step" class="panel" data-passkey-auth="/dashboard/login/two-step/passkey-options" data-passkey-field="response">
          <CsrfField token={csrf} />
          {nextField}
          <input type="hidden" name="response" value="" />
          <p class="passkey-needs-script">Using a passkey needs JavaScript in this browser.</p>
          <button type="button" class="button secondary" data-passkey-button hidden>
            Use a passkey
          </button>
        </form>
      ) : null}
      <Disclosure summary="Use a recovery code" open={recoveryError !== undefined}>
        <form method="post" action="/dashboard/login/two-step">
          <CsrfField token={csrf} />
          {nextField}
          <Field id="recovery_code" label="Recovery code" error={recoveryError} autocomplete="off" hint="One of the codes you saved when you set up two-step verification. Each works once." required />
          <button type="submit">Verify recovery code</button>
        </form>
      </Disclosure>
      <p class="auth-links">
        <a href="/dashboard/login">Sign in with another account</a>
      </p>
    </Layout>
  );
}

/**
 * The second step of signing in (DASHBOARD 11), and passkey sign-in. A two-step session opens only these
 * routes; the two-step service decides every answer.
 */
export const twoStepPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services, config }) => {
  const cookies = dashboardCookies(config);
  const twoStep = services.twoStep;

  async function showTwoStep(request: FastifyRequest, reply: FastifyReply, next: string | null, errors?: FormError[], status = 200) {
    const pending = request.dashboard.pending!;
    const factors = await twoStep.factors(pending.user.org_id, pending.user.id);
    return sendPage(reply, <TwoStepPage csrf={publicCsrf(request, reply, cookies)} next={next} factors={factors} errors={errors} />, status);
  }

  app.get('/login/two-step', { config: publicPage, schema: { hide: true, querystring: TwoStepQuery, response: publicResponses } }, async (request, reply) => {
    if (request.dashboard.session) return seeOther(reply, '/dashboard');
    if (!request.dashboard.pending) return seeOther(reply, '/dashboard/login');
    return showTwoStep(request, reply, safeDashboardPath(request.query.next));
  });

  app.post('/login/two-step', { config: publicPage, schema: { hide: true, body: TwoStepBody, response: publicResponses } }, async (request, reply) => {
    const pending = request.dashboard.pending;
    const next = safeDashboardPath(request.body.next);
    if (!pending) return seeOther(reply, '/dashboard/login');
    const { code, recovery_code: recoveryCode, response } = request.body;
    const proof: TwoStepProof =
      response ? { kind: 'passkey', response, browserSecret: request.dashboard.csrfSecret! } : recoveryCode !== undefined ? { kind: 'recovery', code: recoveryCode } : { kind: 'code', code: code ?? '' };
    try {
      const session = await twoStep.complete(pending, proof);
      request.dashboard.pending = null;
      return await enterSession(services, cookies, request, reply, session, next ?? '/dashboard');
    } catch (error) {
      const refusal = pageRefusal(reply, error);
      if (refusal.code === 'two_step_ended' || refusal.code === 'sign_in_expired') {
        cookies.clearSession(reply);
        // The sign-in page's forms are the browser's again, not the ended session's.
        request.dashboard.pending = null;
        request.dashboard.csrfSecret = request.cookies[cookies.csrf] ?? null;
        return sendPage(reply, <LoginPage csrf={publicCsrf(request, reply, cookies)} next={next} errors={formErrors(refusal)} />, refusal.status);
      }
      return showTwoStep(request, reply, next, formErrors(refusal, { code: 'Code', recovery_code: 'Recovery code' }), refusal.status);
    }
  });

  app.post('/login/two-step/passkey-options', { config: publicPage, schema: { hide: true, body: FormBody({}), response: jsonResponses } }, async (request) => {
    const pending = request.dashboard.pending;
    if (!pending) throw new DomainError(401, 'unauthorized', 'Sign in again.');
    return twoStep.twoStepPasskeyOptions(pending, request.dashboard.csrfSecret!);
  });

  app.post('/login/passkey/options', { config: publicPage, schema: { hide: true, body: FormBody({}), response: jsonResponses } }, async (request) =>
    twoStep.signInOptions(request.dashboard.csrfSecret!, requestContext(request, 'dashboard')),
  );

  app.post('/login/passkey', { config: publicPage, schema: { hide: true, body: PasskeyBody, response: publicResponses } }, async (request, reply) => {
    const next = safeDashboardPath(request.body.next);
    try {
      const session = await twoStep.signInWithPasskey(request.dashboard.csrfSecret!, request.body.response ?? '', requestContext(request, 'dashboard'));
      return await enterSession(services, cookies, request, reply, session, next ?? '/dashboard');
    } catch (error) {
      const refusal = pageRefusal(reply, error);
      return sendPage(reply, <LoginPage csrf={publicCsrf(request, reply, cookies)} next={next} errors={formErrors(refusal)} />, refusal.status);
    }
  });

  app.post('/account/confirm/passkey-options', { config: { dashboardEnrollment: true }, schema: { hide: true, body: FormBody({}), response: jsonResponses } }, async (request) =>
    twoStep.confirmPasskeyOptions(pageContext(request).actor, request.dashboard.csrfSecret!),
  );
};
