import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import QRCode from 'qrcode';
import type { SignInMethod } from '../../db/schema.js';
import { countOf } from '../../lib/text.js';
import { deviceLabel } from '../../lib/user-agent.js';
import { groupedSecret } from '../../lib/totp.js';
import type { SecurityOverview, SessionView, TotpSetup } from '../../services/identity/account-security-service.js';
import type { SsoLinkView } from '../../services/identity/sso-service.js';
import type { AppDeps } from '../../http/app-deps.js';
import { pageContext, pageRefusal, pathId, seeOther, sendPage, type PageContext } from '../context.js';
import { dashboardCookies } from '../cookies.js';
import { flashSecret } from '../flash.js';
import { formErrors } from '../form-validation.js';
import { FormBody, FormText, htmlResponses, pageSchema } from '../schemas.js';
import { ActionForm, CsrfField, errorFor, Field, Table, Time, type FormError } from '../views/components.js';
import { Layout, PASSKEY_SCRIPTS } from '../views/layout.js';
import { SsoLinkSection } from '../views/sso-link.js';

const HERE = '/dashboard/account/security';
/** Open to a member who must set up two-step verification before anything else. */
const enrollment = { dashboardEnrollment: true } as const;

const SecurityQuery = Type.Object({ required: Type.Optional(Type.Literal('1')) }, { additionalProperties: false });
const CodeBody = FormBody({ code: FormText(64) });
const PasskeyBody = FormBody({ name: FormText(1024), response: FormText(16_384) });
const IdParams = Type.Object({ id: Type.String({ maxLength: 128 }) });
const CeremonyOptions = Type.Object({}, { additionalProperties: true, description: 'WebAuthn options (PublicKeyCredentialCreationOptionsJSON).' });

const METHOD_WORDS: Record<SignInMethod, string> = {
  password: 'Password',
  link: 'Email link',
  password_code: 'Password and code',
  password_recovery: 'Password and recovery code',
  password_passkey: 'Password and passkey',
  passkey: 'Passkey',
  sso: 'Single sign-on',
};

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * DASHBOARD 11: the page opens with the state in words, the factors named, so a member told to set up two-step
 * verification can see they are done (review 5, SE1).
 */
export function twoStepState(overview: Pick<SecurityOverview, 'totp' | 'passkeys' | 'recoveryCodesLeft'>): string {
  const factors = [overview.totp === 'on' ? 'authenticator app' : null, overview.passkeys.length > 0 ? countOf(overview.passkeys.length, 'passkey') : null].filter((f) => f !== null);
  if (factors.length === 0) return 'Two-step verification is off. Set up an authenticator app or add a passkey to turn it on.';
  return `Two-step verification is on: ${factors.join(', ')}, ${overview.recoveryCodesLeft} of 10 recovery codes left.`;
}

function SecurityView({ page, overview, sessions, link, required, errors, passkeyName }: { page: PageContext; overview: SecurityOverview; sessions: SessionView[]; link: SsoLinkView; required: boolean; errors?: FormError[] | undefined; passkeyName?: string }) {
  const { viewer, csrf } = page;
  const hasFactor = overview.totp === 'on' || overview.passkeys.length > 0;
  // What the person does not have yet comes first; the one primary button is the first thing to set up.
  const passkeysFirst = overview.totp === 'on' && overview.passkeys.length === 0;
  const totp = (
    <section aria-labelledby="totp-title" class="panel">
      <h2 id="totp-title">Authenticator app</h2>
      {overview.totp === 'on' ? (
        <>
          <p>On: signing in asks for a code from your authenticator app after your password.</p>
          {overview.organizationRequires && overview.passkeys.length === 0 ? (
            <p class="muted">Your organisation requires two-step verification, so it cannot be turned off.</p>
          ) : (
            <ActionForm action={`${HERE}/totp/disable`} csrf={csrf} label="Turn off two-step verification" danger />
          )}
        </>
      ) : (
        <>
          <p>Use an app such as 1Password, Google Authenticator or Microsoft Authenticator for a 6-digit code at each sign-in.</p>
          <ActionForm action={`${HERE}/totp/setup`} csrf={csrf} label="Set up authenticator app" secondary={hasFactor} />
        </>
      )}
    </section>
  );
  const passkeys = (
    <section aria-labelledby="passkeys-title" class="panel">
      <h2 id="passkeys-title">Passkeys</h2>
      <p>A passkey signs you in with your device's screen lock or a security key, without a password, and counts as two steps.</p>
      <Table caption="Passkeys" headers={['Name', 'Added', 'Last used', 'Actions']} empty="No passkeys yet." captionHidden>
        {overview.passkeys.map((passkey) => (
          <tr>
            <td>{passkey.name}</td>
            <td>
              <Time iso={iso(passkey.createdAt)} />
            </td>
            <td>
              <Time iso={iso(passkey.lastUsedAt)} never="Never" />
            </td>
            <td>
              <ActionForm action={`${HERE}/passkeys/${passkey.id}/remove`} csrf={csrf} label="Remove" ariaLabel={`Remove passkey ${passkey.name}`} danger />
            </td>
          </tr>
        ))}
      </Table>
      <PasskeyForm csrf={csrf} name={passkeyName} errors={errors} primary={passkeysFirst} />
    </section>
  );
  return (
    <Layout title="Security" viewer={viewer} csrf={csrf} current={HERE} errors={errors} scripts={PASSKEY_SCRIPTS}>
      <p class={hasFactor ? 'state-line state-on' : 'state-line state-off'} id="two-step-state">
        {twoStepState(overview)}
      </p>
      {required && !hasFactor ? (
        <p class="lead" role="status">
          Your organisation requires two-step verification. Set up an authenticator app or a passkey to go on.
        </p>
      ) : null}
      {passkeysFirst ? passkeys : totp}
      {passkeysFirst ? totp : passkeys}
      <section aria-labelledby="recovery-title" class="panel">
        <h2 id="recovery-title">Recovery codes</h2>
        {hasFactor ? (
          <>
            <p>
              {overview.recoveryCodesLeft} of 10 recovery codes left. Each signs in once when you cannot use your app or passkey.
            </p>
            <ActionForm action={`${HERE}/recovery-codes`} csrf={csrf} label="Generate new recovery codes" secondary />
          </>
        ) : (
          <p class="muted">You get ten recovery codes when you set up an authenticator app or your first passkey.</p>
        )}
      </section>
      <SsoLinkSection link={link} csrf={csrf} back={HERE} />
      <section aria-labelledby="sessions-title" class="panel">
        <h2 id="sessions-title">Sessions</h2>
        <Table caption="Sessions" headers={['Device', 'IP address', 'Signed in', 'Last seen', 'Actions']} captionHidden>
          {sessions.map((session) => (
            <tr>
              <td>
                {deviceLabel(session.userAgent)}
                {session.current ? <strong class="badge">This session</strong> : null}
              </td>
              <td>{session.ip ?? <span class="muted">unknown</span>}</td>
              <td>
                <Time iso={iso(session.createdAt)} />
                <span class="cell-sub">with {METHOD_WORDS[session.method].toLowerCase()}</span>
              </td>
              <td>
                <Time iso={iso(session.lastSeenAt)} />
              </td>
              <td>
                <ActionForm
                  action={`${HERE}/sessions/${session.id}/revoke`}
                  csrf={csrf}
                  label="Sign out"
                  ariaLabel={session.current ? 'Sign out of this session' : `Sign out of ${deviceLabel(session.userAgent)}, last seen ${new Date(session.lastSeenAt).toUTCString()}`}
                  secondary
                />
              </td>
            </tr>
          ))}
        </Table>
        {sessions.length > 1 ? <ActionForm action={`${HERE}/sessions/revoke-others`} csrf={csrf} label="Sign out of all other sessions" secondary /> : null}
      </section>
      {viewer.role === 'owner' || viewer.role === 'admin' ? (
        <p>
          <a href="/dashboard/settings">Organisation settings</a>
        </p>
      ) : null}
    </Layout>
  );
}

/** "Add a passkey": the page script runs the browser's ceremony on submit; without it, the server says it is needed. */
function PasskeyForm({ csrf, name, errors, primary = true }: { csrf: string; name?: string | undefined; errors?: FormError[] | undefined; primary?: boolean }) {
  return (
    <form method="post" action={`${HERE}/passkeys`} data-passkey-register={`${HERE}/passkeys/options`}>
      <CsrfField token={csrf} />
      <input type="hidden" name="response" value="" />
      <Field id="name" label="Passkey name" value={name} error={errorFor(errors, 'name')} hint='For example "Work laptop" or "Phone".' maxLength={100} />
      <p class="passkey-needs-script">Adding a passkey needs JavaScript in this browser.</p>
      <button type="submit" class={primary ? undefined : 'secondary'} hidden>
        Add a passkey
      </button>
    </form>
  );
}

async function TotpSetupView({ page, setup, errors }: { page: PageContext; setup: TotpSetup; errors?: FormError[] | undefined }) {
  const svg = await QRCode.toString(setup.uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
  return (
    <Layout title="Set up authenticator app" viewer={page.viewer} csrf={page.csrf} current={HERE} errors={errors}>
      <ol class="steps">
        <li>Scan this QR code with your authenticator app.</li>
        <li>Or type the setup key into the app yourself.</li>
        <li>Enter the 6-digit code the app shows, then choose "Turn on".</li>
      </ol>
      <div class="qr-code" role="img" aria-label="QR code for your authenticator app" dangerouslySetInnerHTML={{ __html: svg }} />
      <p>
        Setup key: <code class="setup-key">{groupedSecret(setup.secret)}</code>
      </p>
      <form method="post" action={`${HERE}/totp/enable`}>
        <CsrfField token={page.csrf} />
        <Field id="code" label="Code" error={errorFor(errors, 'code')} autocomplete="one-time-code" required autofocus />
        <button type="submit">Turn on</button>
      </form>
      <p>
        <a href={HERE}>Cancel</a>
      </p>
    </Layout>
  );
}

function RecoveryCodesView({ page, codes }: { page: PageContext; codes: string[] | null }) {
  const text = codes ? `Workspace Service recovery codes for ${page.viewer.email} (${page.viewer.organizationName})\nEach code works once.\n\n${codes.join('\n')}\n` : '';
  return (
    <Layout title="Recovery codes" viewer={page.viewer} csrf={page.csrf} current={HERE}>
      {codes ? (
        <>
          <p class="lead">Save these codes somewhere safe now: they are shown only this once. Each signs you in once when you cannot use your app or passkey.</p>
          <ul aria-label="Recovery codes" class="recovery-codes">
            {codes.map((code) => (
              <li>
                <code>{code}</code>
              </li>
            ))}
          </ul>
          <p>
            <a class="button" href={`data:text/plain;charset=utf-8,${encodeURIComponent(text)}`} download="workspace-recovery-codes.txt">
              Download recovery codes
            </a>
          </p>
        </>
      ) : (
        <p class="lead">Recovery codes are shown once, after they are made. Generate new ones on the security page if these were not saved.</p>
      )}
      <p>
        <a href={HERE}>I have saved them: back to Security</a>
      </p>
    </Layout>
  );
}

/** A page after which the passkey ceremony goes on (a confirmation came between, or the browser has no script). */
function AddPasskeyView({ page, name, errors }: { page: PageContext; name: string; errors?: FormError[] | undefined }) {
  return (
    <Layout title="Add a passkey" viewer={page.viewer} csrf={page.csrf} current={HERE} errors={errors} scripts={PASSKEY_SCRIPTS}>
      <p class="lead">Your browser asks you to create the passkey with your screen lock or security key.</p>
      <PasskeyForm csrf={page.csrf} name={name} errors={errors} />
      <p>
        <a href={HERE}>Cancel</a>
      </p>
    </Layout>
  );
}

/**
 * "Security" (DASHBOARD 11): the user's authenticator app, recovery codes, passkeys and sessions. Every
 * route here stays open to a member whose organisation requires a factor they have not set up yet.
 */
export const securityPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services, config }) => {
  const security = services.accountSecurity;
  const cookies = dashboardCookies(config);

  async function showSecurity(page: PageContext, required: boolean, errors?: FormError[], passkeyName?: string) {
    const [overview, sessions, link] = await Promise.all([security.overview(page.actor), security.sessions(page.actor), services.sso.linkState(page.actor)]);
    return <SecurityView page={page} overview={overview} sessions={sessions} link={link} required={required || page.session.twoStep.mustEnroll} errors={errors} passkeyName={passkeyName} />;
  }

  app.get('/account/security', { config: enrollment, schema: pageSchema(SecurityQuery) }, async (request, reply) => {
    const page = pageContext(request);
    return sendPage(reply, await showSecurity(page, request.query.required === '1'));
  });

  app.post('/account/security/totp/setup', { config: enrollment, schema: { hide: true, body: FormBody({}), response: htmlResponses } }, async (request, reply) => {
    await security.beginTotp(pageContext(request).actor);
    return seeOther(reply, `${HERE}/totp`);
  });

  app.get('/account/security/totp', { config: enrollment, schema: pageSchema() }, async (request, reply) => {
    const page = pageContext(request);
    const setup = await security.totpSetup(page.actor);
    if (!setup) return seeOther(reply, HERE);
    return sendPage(reply, await TotpSetupView({ page, setup }));
  });

  app.post('/account/security/totp/enable', { config: enrollment, schema: { hide: true, body: CodeBody, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    try {
      const codes = await security.enableTotp(page.actor, request.body.code ?? '');
      return seeOther(reply, `${HERE}/recovery-codes`, { notice: 'Two-step verification is on.', secret: { kind: 'recovery_codes', id: page.actor.userId, value: codes.join('\n') } });
    } catch (error) {
      const refusal = pageRefusal(reply, error, [400]);
      const setup = await security.totpSetup(page.actor);
      if (!setup) throw error;
      return sendPage(reply, await TotpSetupView({ page, setup, errors: formErrors(refusal, { code: 'Code' }) }), refusal.status);
    }
  });

  app.post('/account/security/totp/disable', { config: enrollment, schema: { hide: true, body: FormBody({}), response: htmlResponses } }, async (request, reply) => {
    await security.disableTotp(pageContext(request).actor);
    return seeOther(reply, HERE, { notice: 'Two-step verification with an authenticator app is off. Your other sessions were signed out.' });
  });

  app.post('/account/security/recovery-codes', { config: enrollment, schema: { hide: true, body: FormBody({}), response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const codes = await security.regenerateRecoveryCodes(page.actor);
    return seeOther(reply, `${HERE}/recovery-codes`, { notice: 'New recovery codes were made; the old ones no longer work.', secret: { kind: 'recovery_codes', id: page.actor.userId, value: codes.join('\n') } });
  });

  app.get('/account/security/recovery-codes', { config: enrollment, schema: pageSchema() }, async (request, reply) => {
    const page = pageContext(request);
    const shown = flashSecret(page.viewer.flash, 'recovery_codes', page.actor.userId);
    return sendPage(reply, <RecoveryCodesView page={page} codes={shown ? shown.value.split('\n') : null} />);
  });

  app.post('/account/security/passkeys/options', { config: enrollment, schema: { hide: true, body: FormBody({}), response: { 200: CeremonyOptions } } }, async (request) =>
    security.passkeyRegistrationOptions(pageContext(request).actor, request.dashboard.csrfSecret!),
  );

  app.post('/account/security/passkeys', { config: enrollment, schema: { hide: true, body: PasskeyBody, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const name = request.body.name ?? '';
    const response = request.body.response ?? '';
    try {
      // No credential yet (a confirmation came first, or no script ran): the ceremony's own page.
      if (response === '') {
        security.assertConfirmed(page.actor);
        return sendPage(reply, <AddPasskeyView page={page} name={name} />);
      }
      const added = await security.addPasskey(page.actor, request.dashboard.csrfSecret!, name, response);
      const notice = `Passkey "${added.passkey.name}" added.`;
      if (added.recoveryCodes) {
        return seeOther(reply, `${HERE}/recovery-codes`, { notice, secret: { kind: 'recovery_codes', id: page.actor.userId, value: added.recoveryCodes.join('\n') } });
      }
      return seeOther(reply, HERE, { notice });
    } catch (error) {
      const refusal = pageRefusal(reply, error, [400, 409]);
      return sendPage(reply, <AddPasskeyView page={page} name={name} errors={formErrors(refusal, { name: 'Passkey name' })} />, refusal.status);
    }
  });

  app.post('/account/security/passkeys/:id/remove', { config: enrollment, schema: { hide: true, params: IdParams, body: FormBody({}), response: htmlResponses } }, async (request, reply) => {
    await security.removePasskey(pageContext(request).actor, pathId(request.params.id, 'passkey'));
    return seeOther(reply, HERE, { notice: 'The passkey was removed. Your other sessions were signed out.' });
  });

  app.post('/account/security/sessions/:id/revoke', { config: enrollment, schema: { hide: true, params: IdParams, body: FormBody({}), response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const id = pathId(request.params.id, 'session');
    await security.revokeSession(page.actor, id);
    if (id === page.session.sessionId) {
      cookies.clearSession(reply);
      return reply.code(303).header('location', '/dashboard/login?signed_out=1').send();
    }
    return seeOther(reply, HERE, { notice: 'That session was signed out.' });
  });

  app.post('/account/security/sessions/revoke-others', { config: enrollment, schema: { hide: true, body: FormBody({}), response: htmlResponses } }, async (request, reply) => {
    const ended = await security.revokeOtherSessions(pageContext(request).actor);
    return seeOther(reply, HERE, { notice: ended === 1 ? 'One other session was signed out.' : `${ended} other sessions were signed out.` });
  });
};
