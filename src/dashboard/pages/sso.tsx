import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { OidcClaims } from '../../sso/oidc-client.js';
import type { SsoDomainView, SsoLinkView, SsoSettingsView } from '../../services/identity/sso-service.js';
import type { AppDeps } from '../../http/app-deps.js';
import { errors as domainErrors } from '../../errors.js';
import { requestContext } from '../../http/request-context.js';
import { pageContext, pageRefusal, publicCsrf, safeDashboardPath, seeOther, sendPage, type PageContext } from '../context.js';
import { dashboardCookies } from '../cookies.js';
import { formErrors } from '../form-validation.js';
import { FormBody, FormText, htmlResponses, pageSchema } from '../schemas.js';
import { ActionForm, ConfirmActions, CsrfField, DangerItem, DangerLink, DangerZone, errorFor, Field, Select, Time, type FormError } from '../views/components.js';
import { Layout, SETTINGS } from '../views/layout.js';
import { SsoLinkSection } from '../views/sso-link.js';
import { enterSession, publicPage, publicResponses } from './auth.js';

const HERE = '/dashboard/settings/sso';
const ConnectionBody = FormBody({ issuer: FormText(2048), client_id: FormText(512), client_secret: FormText(4096), jit: Type.Optional(Type.Literal('on')), default_role: FormText(16) });
const DomainBody = FormBody({ domain: FormText(512) });
const RequireBody = FormBody({ required: Type.Union([Type.Literal('on'), Type.Literal('off')]), revoke_keys: Type.Optional(Type.Literal('on')) });
const NextBody = FormBody({ next: FormText(2048) });
const StartBody = FormBody({ email: FormText(1024), next: FormText(2048) });
const StartQuery = Type.Object({ next: Type.Optional(Type.String({ maxLength: 2048 })) }, { additionalProperties: false });
/** What providers send back: `code`, `state`, `iss` (RFC 9207) or an error, and often more (`session_state`, `scope`…). */
const CallbackQuery = Type.Object(
  { code: Type.Optional(Type.String({ maxLength: 4096 })), state: Type.Optional(Type.String({ maxLength: 512 })) },
  { additionalProperties: Type.String({ maxLength: 4096 }) },
);

const ROLE_OPTIONS = [
  { value: 'member', label: 'Member' },
  { value: 'viewer', label: 'Viewer' },
];

const STATUS_WORDS: Record<SsoDomainView['status'], string> = { pending: 'Not verified yet', verified: 'Verified', record_missing: 'Verified; record missing' };

function yesNo(value: boolean | null): string {
  return value === null ? 'not given' : value ? 'yes' : 'no';
}

/** "Continue to your identity provider": a page that goes there by itself, with a link for the rest. */
export function RedirectPage({ url, page }: { url: URL; page?: PageContext | undefined }) {
  return (
    <Layout title="Continue to your identity provider" viewer={page?.viewer} csrf={page?.csrf} redirectTo={url.href}>
      <p class="lead">You are being sent to {url.host} to sign in.</p>
      <p>
        <a href={url.href} class="button">
          Continue to {url.host}
        </a>
      </p>
    </Layout>
  );
}

/** One domain as a card: its state, the record to publish, and what can be done (a table would not fit a phone). */
function DomainItem({ domain, csrf, canChange }: { domain: SsoDomainView; csrf: string; canChange: boolean }) {
  return (
    <li class="domain-item">
      <h3>{domain.domain}</h3>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          {STATUS_WORDS[domain.status]}
          {domain.status === 'record_missing' && domain.unverifiesAt !== null ? (
            <>
              {' '}
              (unverified on <Time iso={new Date(domain.unverifiesAt).toISOString()} absolute /> unless it is published again)
            </>
          ) : null}
        </dd>
        <dt>TXT record name</dt>
        <dd>
          <code>{domain.recordName}</code>
        </dd>
        <dt>TXT record value</dt>
        <dd>
          <code>{domain.recordValue}</code>
        </dd>
      </dl>
      {canChange ? (
        <div class="domain-actions">
          {domain.status !== 'verified' ? <ActionForm action={`${HERE}/domains/verify`} csrf={csrf} label="Verify domain" ariaLabel={`Verify domain ${domain.domain}`} hidden={{ domain: domain.domain }} /> : null}
          <ActionForm action={`${HERE}/domains/remove`} csrf={csrf} label="Remove" ariaLabel={`Remove domain ${domain.domain}`} hidden={{ domain: domain.domain }} danger />
        </div>
      ) : null}
    </li>
  );
}

function ConnectionFacts({ connection }: { connection: NonNullable<SsoSettingsView['connection']> }) {
  return (
    <dl class="facts">
      <dt>Issuer URL</dt>
      <dd>
        <code class="break">{connection.issuer}</code>
      </dd>
      <dt>Client ID</dt>
      <dd class="break">{connection.clientId}</dd>
      <dt>Create members on first sign-in</dt>
      <dd>{connection.jit ? `Yes, as ${connection.defaultRole}` : 'No'}</dd>
    </dl>
  );
}

function TestFacts({ connection }: { connection: NonNullable<SsoSettingsView['connection']> }) {
  if (!connection.test) return <p>Not tested since the connection was saved.</p>;
  return (
    <dl class="facts">
      <dt>Last successful test</dt>
      <dd>
        <Time iso={connection.testedAt === null ? null : new Date(connection.testedAt).toISOString()} />
      </dd>
      <dt>Subject</dt>
      <dd>
        <code class="break">{connection.test.subject}</code>
      </dd>
      <dt>Email</dt>
      <dd class="break">{connection.test.email ?? 'not given'}</dd>
      <dt>E-mail confirmed by the provider</dt>
      <dd>{yesNo(connection.test.emailVerified)}</dd>
    </dl>
  );
}

function ConnectionForm({ csrf, connection, errors }: { csrf: string; connection: SsoSettingsView['connection']; errors?: FormError[] | undefined }) {
  return (
    <form method="post" action={`${HERE}/connection`}>
      <CsrfField token={csrf} />
      <Field id="issuer" label="Issuer URL" type="url" value={connection?.issuer} error={errorFor(errors, 'issuer')} hint="https://…, exactly as the provider's discovery document names it (for Entra ID, your tenant's, never common)." required />
      <Field id="client_id" label="Client ID" value={connection?.clientId} error={errorFor(errors, 'client_id')} required autocomplete="off" />
      <Field
        id="client_secret"
        label="Client secret"
        type="password"
        error={errorFor(errors, 'client_secret')}
        hint={
          connection
            ? 'Stored sealed and never shown again. Leave empty to keep the stored secret; a new issuer or client ID needs it typed again.'
            : 'Stored sealed and never shown again.'
        }
        required={!connection}
        autocomplete="new-password"
      />
      <div class="field">
        <label class="checkbox">
          <input type="checkbox" name="jit" value="on" checked={connection?.jit ?? false} aria-describedby="jit-hint" /> Create members on first sign-in
        </label>
        <p class="hint" id="jit-hint">
          Only for an email in a verified domain that the provider marks as verified. Off: people must be invited first.
        </p>
      </div>
      <Select id="default_role" label="Default role" options={ROLE_OPTIONS} value={connection?.defaultRole ?? 'member'} error={errorFor(errors, 'default_role')} />
      <button type="submit">Save connection</button>
    </form>
  );
}

/** Owners and admins link themselves: who has not yet, and what that means once single sign-on is required. */
function UnlinkedAdmins({ names, required }: { names: string[]; required: boolean }) {
  if (names.length === 0) return null;
  return (
    <p>
      Owners and admins are never linked by email: each links their own account. Not linked yet: {names.join(', ')}.{' '}
      {required
        ? 'While single sign-on is required, an admin who is not linked cannot sign in (an owner can make them a member until their first single sign-on), and an owner signs in with a password and a second factor.'
        : 'Once single sign-on is required, an admin who is not linked cannot sign in: ask them to use "Link my single sign-on account" first.'}
    </p>
  );
}

function RequireSection({ page, view }: { page: PageContext; view: SsoSettingsView }) {
  const { csrf } = page;
  const connection = view.connection;
  const keys = view.requiredMembersKeys;
  if (connection?.requiredAt != null) {
    return (
      <>
        <UnlinkedAdmins names={view.unlinkedAdmins} required />
        <p>
          Required since <Time iso={new Date(connection.requiredAt).toISOString()} absolute />. Members whose email is in a verified domain sign in only with single sign-on;
          owners keep a password sign-in with a second factor for emergencies, audited and mailed to every owner.
        </p>
        <p>
          API keys are credentials of their own and keep working.
          {view.canChange && keys > 0 ? ` Members who must use single sign-on still hold ${countWords(keys, 'live API key')}; revoke them under "API keys".` : ''}
        </p>
        {view.canChange ? <ActionForm action={`${HERE}/require`} csrf={csrf} label="Stop requiring single sign-on" hidden={{ required: 'off' }} secondary /> : null}
      </>
    );
  }
  return (
    <>
      <p>
        Once required, members whose email is in a verified domain cannot sign in with a password or a passkey. Their API keys are credentials of their own and
        keep working{view.canChange ? (keys > 0 ? ', unless you revoke them with it below.' : '; none of them holds one now.') : '.'}
      </p>
      <UnlinkedAdmins names={view.unlinkedAdmins} required={false} />
      {!view.canChange ? <p class="muted">Only an owner can require single sign-on.</p> : view.requireBlockedBy ? <p class="muted">{view.requireBlockedBy}</p> : null}
      {view.canChange && view.requireBlockedBy === null ? (
        <form method="post" action={`${HERE}/require`}>
          <CsrfField token={csrf} />
          <input type="hidden" name="required" value="on" />
          {keys > 0 ? (
            <div class="field">
              <label class="checkbox">
                <input type="checkbox" name="revoke_keys" value="on" aria-describedby="revoke-keys-hint" /> Also revoke their API keys ({countWords(keys, 'key')})
              </label>
              <p class="hint" id="revoke-keys-hint">
                The live keys of members who will have to sign in with single sign-on stop working at once. Owners' keys are kept.
              </p>
            </div>
          ) : null}
          <button type="submit">Require single sign-on</button>
        </form>
      ) : null}
    </>
  );
}

function countWords(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function SettingsView({ page, view, link, errors }: { page: PageContext; view: SsoSettingsView; link: SsoLinkView; errors?: FormError[] | undefined }) {
  const { csrf, viewer } = page;
  const connection = view.connection;
  return (
    <Layout title="Single sign-on" viewer={viewer} csrf={csrf} current={SETTINGS} errors={errors}>
      <p class="lead">
        Members sign in through your identity provider (OpenID Connect). Register this service there as a web application with the redirect URL below and the scopes{' '}
        <code>openid email profile</code>. Step-by-step set-up for Keycloak, Entra ID, Okta and Google is in the SSO guide of the documentation.
      </p>
      {!view.canChange ? (
        <p class="muted">
          Only owners change single sign-on: whoever controls the identity provider can sign in as the members it vouches for. Every change is mailed to every owner.
        </p>
      ) : null}
      <section class="panel" aria-labelledby="connection-heading">
        <h2 id="connection-heading">Connection</h2>
        <p>
          Redirect URL: <code class="break">{view.redirectUrl}</code>
        </p>
        {view.canChange ? <ConnectionForm csrf={csrf} connection={connection} errors={errors} /> : connection ? <ConnectionFacts connection={connection} /> : <p class="muted">No connection yet.</p>}
        {connection ? (
          <>
            <h3>Test</h3>
            <TestFacts connection={connection} />
            {view.canChange ? (
              <>
                <ActionForm action={`${HERE}/test`} csrf={csrf} label="Test single sign-on" secondary />
                <p class="hint">Signs you in at the provider and shows what it returned, without signing anyone in here.</p>
              </>
            ) : null}
          </>
        ) : null}
      </section>

      <SsoLinkSection link={link} csrf={csrf} back={HERE} />

      <section class="panel" aria-labelledby="domains-heading">
        <h2 id="domains-heading">Domains</h2>
        <p>
          Publish a DNS TXT record for each email domain of your organisation, then verify it. A domain is verified for one organisation at a time, and is checked
          again every day.
        </p>
        {view.domains.length > 0 ? (
          <ul class="domain-list" aria-label="Email domains">
            {view.domains.map((domain) => (
              <DomainItem domain={domain} csrf={csrf} canChange={view.canChange} />
            ))}
          </ul>
        ) : (
          <p class="muted">No domains yet.</p>
        )}
        {view.canChange ? (
          <form method="post" action={`${HERE}/domains`}>
            <CsrfField token={csrf} />
            <Field id="domain" label="Email domain" error={errorFor(errors, 'domain')} hint="For example example.com (the part after @)." required />
            <button type="submit" class="secondary">
              Add domain
            </button>
          </form>
        ) : null}
      </section>

      <section class="panel" aria-labelledby="require-heading">
        <h2 id="require-heading">Requirement</h2>
        <RequireSection page={page} view={view} />
      </section>
      {view.canChange && connection ? (
        <DangerZone>
          <DangerItem
            title="Delete the connection"
            control={connection.requiredAt === null ? <DangerLink href={`${HERE}/connection/delete`} label="Delete connection" /> : <p class="hint">Stop requiring single sign-on first: members would have no way to sign in.</p>}
          >
            Nobody can sign in with single sign-on until a connection is saved again. Who is linked to whom is kept: the same people sign in again then.
          </DangerItem>
        </DangerZone>
      ) : null}
    </Layout>
  );
}

function StartPage({ csrf, next, email, errors }: { csrf: string; next: string | null; email?: string | undefined; errors?: FormError[] | undefined }) {
  return (
    <Layout title="Sign in with single sign-on" errors={errors}>
      <form method="post" action="/dashboard/login/sso">
        <CsrfField token={csrf} />
        {next ? <input type="hidden" name="next" value={next} /> : null}
        <Field id="email" label="Work email" type="email" value={email} error={errorFor(errors, 'email')} autocomplete="username" required autofocus />
        <button type="submit">Continue</button>
      </form>
      <p class="auth-links">
        <a href="/dashboard/login">Sign in with a password</a>
      </p>
    </Layout>
  );
}

function testResultNotice(claims: OidcClaims, recorded: boolean): string {
  // Words, with the subject kept as the code it is (review 5, SSO3).
  const what = `${claims.email ?? 'no e-mail'} (subject ${claims.subject}; e-mail confirmed by the provider: ${yesNo(claims.emailVerified)})`;
  return recorded ? `Single sign-on works. The provider returned ${what}.` : `The provider returned ${what}, but the connection was changed meanwhile: test again.`;
}

/**
 * Single sign-on (DASHBOARD 12): the settings page (admins see it, owners change it), "Sign in with single
 * sign-on", "Link my single sign-on account", the callback every round trip returns to, and "Confirm it's
 * you" at the provider.
 */
export const ssoPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services, config }) => {
  const sso = services.sso;
  const cookies = dashboardCookies(config);

  async function redirect(reply: FastifyReply, url: URL, page?: PageContext): Promise<FastifyReply> {
    return sendPage(reply, <RedirectPage url={url} page={page} />);
  }

  app.get('/settings/sso', { schema: pageSchema() }, async (request, reply) => {
    const page = pageContext(request);
    const [view, link] = await Promise.all([sso.settings(page.actor), sso.linkState(page.actor)]);
    return sendPage(reply, <SettingsView page={page} view={view} link={link} />);
  });

  app.post('/settings/sso/connection', { schema: { hide: true, body: ConnectionBody, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const body = request.body;
    await sso.saveConnection(page.actor, { issuer: body.issuer ?? '', clientId: body.client_id ?? '', clientSecret: body.client_secret ?? '', jit: body.jit === 'on', defaultRole: body.default_role ?? 'member' });
    return seeOther(reply, HERE, { notice: 'Connection saved. The provider\'s discovery document was checked.' });
  });

  // DASHBOARD 1: a destructive action goes through a confirmation step; only those who may change sign-in see it.
  app.get('/settings/sso/connection/delete', { schema: pageSchema() }, async (request, reply) => {
    const page = pageContext(request);
    const view = await sso.settings(page.actor);
    if (!view.canChange) throw domainErrors.forbidden('only an owner changes single sign-on');
    if (!view.connection) return seeOther(reply, HERE, { problem: 'There is no connection to delete.' });
    if (view.connection.requiredAt !== null) return seeOther(reply, HERE, { problem: 'Stop requiring single sign-on before deleting the connection: members would have no way to sign in.' });
    return sendPage(
      reply,
      <Layout title="Delete the single sign-on connection" viewer={page.viewer} csrf={page.csrf} current={SETTINGS}>
        <p class="lead">
          Delete the connection to <code class="break">{view.connection.issuer}</code>?
        </p>
        <p>Nobody can sign in with single sign-on until a connection is saved again; members sign in with passwords and passkeys. Who is linked to whom is kept, so the same people sign in as themselves if the same provider is connected again. Every owner is mailed.</p>
        <ConfirmActions action={`${HERE}/connection/delete`} csrf={page.csrf} label="Delete connection" cancelHref={HERE} cancelLabel="Keep the connection" />
      </Layout>,
    );
  });

  app.post('/settings/sso/connection/delete', { schema: { hide: true, body: FormBody({}), response: htmlResponses } }, async (request, reply) => {
    await sso.deleteConnection(pageContext(request).actor);
    return seeOther(reply, HERE, { notice: 'Connection deleted. Members sign in with passwords and passkeys.' });
  });

  app.post('/settings/sso/domains', { schema: { hide: true, body: DomainBody, response: htmlResponses } }, async (request, reply) => {
    const added = await sso.addDomain(pageContext(request).actor, request.body.domain ?? '');
    return seeOther(reply, HERE, { notice: `Publish a TXT record named ${added.recordName} with the value ${added.recordValue}, then choose "Verify domain".` });
  });

  app.post('/settings/sso/domains/verify', { schema: { hide: true, body: DomainBody, response: htmlResponses } }, async (request, reply) => {
    const verified = await sso.verifyDomain(pageContext(request).actor, request.body.domain ?? '');
    return seeOther(reply, HERE, { notice: `${verified.domain} is verified.` });
  });

  app.post('/settings/sso/domains/remove', { schema: { hide: true, body: DomainBody, response: htmlResponses } }, async (request, reply) => {
    const domain = request.body.domain ?? '';
    await sso.removeDomain(pageContext(request).actor, domain);
    return seeOther(reply, HERE, { notice: `${domain} was removed.` });
  });

  app.post('/settings/sso/require', { schema: { hide: true, body: RequireBody, response: htmlResponses } }, async (request, reply) => {
    const required = request.body.required === 'on';
    const { revokedKeys } = await sso.setRequired(pageContext(request).actor, required, { revokeKeys: request.body.revoke_keys === 'on' });
    const revoked = revokedKeys > 0 ? ` ${countWords(revokedKeys, 'API key')} of members who must use it ${revokedKeys === 1 ? 'was' : 'were'} revoked.` : '';
    return seeOther(reply, HERE, { notice: required ? `Single sign-on is now required.${revoked}` : 'Single sign-on is no longer required.' });
  });

  app.post('/settings/sso/test', { schema: { hide: true, body: FormBody({}), response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    return redirect(reply, await sso.startTest(page.actor, request.dashboard.csrfSecret!), page);
  });

  app.post('/sso/confirm', { schema: { hide: true, body: NextBody, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const next = safeDashboardPath(request.body.next);
    return redirect(reply, await sso.startConfirm(page.actor, request.dashboard.csrfSecret!, next), page);
  });

  app.post('/sso/link', { schema: { hide: true, body: NextBody, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const next = safeDashboardPath(request.body.next);
    return redirect(reply, await sso.startLink(page.actor, request.dashboard.csrfSecret!, next), page);
  });

  app.get('/login/sso', { config: publicPage, schema: { hide: true, querystring: StartQuery, response: publicResponses } }, async (request, reply) => {
    if (request.dashboard.session) return seeOther(reply, '/dashboard');
    return sendPage(reply, <StartPage csrf={publicCsrf(request, reply, cookies)} next={safeDashboardPath(request.query.next)} />);
  });

  app.post('/login/sso', { config: publicPage, schema: { hide: true, body: StartBody, response: publicResponses } }, async (request, reply) => {
    const email = request.body.email ?? '';
    const next = safeDashboardPath(request.body.next);
    try {
      const secret = request.dashboard.csrfSecret!;
      return await redirect(reply, await sso.startSignIn(email, secret, requestContext(request, 'dashboard'), next));
    } catch (error) {
      const refusal = pageRefusal(reply, error);
      return sendPage(reply, <StartPage csrf={publicCsrf(request, reply, cookies)} next={next} email={email} errors={formErrors(refusal, { email: 'Work email' })} />, refusal.status);
    }
  });

  app.get('/sso/callback', { config: publicPage, schema: { hide: true, querystring: CallbackQuery, response: publicResponses } }, async (request, reply) => {
    const url = new URL(request.url, config.publicBaseUrl);
    const signedIn = request.dashboard.session?.actor ?? null;
    const result = await sso.callback(url, request.dashboard.csrfSecret, signedIn, requestContext(request, 'dashboard'));
    if (result.kind === 'session') return enterSession(services, cookies, request, reply, result.session, result.next ?? '/dashboard');
    if (result.kind === 'test') return seeOther(reply, HERE, { notice: testResultNotice(result.claims, result.recorded) });
    if (result.kind === 'linked') {
      const who = result.claims.email ?? `subject ${result.claims.subject}`;
      return seeOther(reply, result.next ?? '/dashboard/account/security', { notice: result.already ? `Your account was already linked to ${who}.` : `Your account is now linked to ${who} at your identity provider.` });
    }
    return seeOther(reply, result.next ?? '/dashboard', { notice: "Confirmed. Send the form again: you will not be asked for 15 minutes." });
  });
};
