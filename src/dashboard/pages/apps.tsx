import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { AppDeps } from '../../http/app-deps.js';
import { errors } from '../../errors.js';
import type { ConsentRequest } from '../../oauth/authorization-server.js';
import { scopeFromOauth, scopeInWords } from '../../services/apps/app-scopes.js';
import type { AppSettings, ConnectedApp } from '../../services/apps/connected-apps-service.js';
import { pageContext, pathId, seeOther, sendPage, type PageContext } from '../context.js';
import { FormBody, htmlResponses, pageSchema } from '../schemas.js';
import { ConfirmActions, CsrfField, Table, Time } from '../views/components.js';
import { Layout, SETTINGS as ALL_SETTINGS } from '../views/layout.js';

const SETTINGS = '/dashboard/settings/apps';
const ACCOUNT = '/dashboard/account';

const UidParams = Type.Object({ uid: Type.String({ maxLength: 128 }) });
const GrantParams = Type.Object({ id: Type.String({ maxLength: 128 }) });
const DecisionBody = FormBody({ decision: Type.Union([Type.Literal('allow'), Type.Literal('deny')]) });
const SwitchesBody = FormBody({ members_may_connect: Type.Optional(Type.Literal('on')), agents_may_delete: Type.Optional(Type.Literal('on')) });

const RESOURCE_WORDS = { mcp: 'AI agent (MCP)', v1: 'API' } as const;

/** The consented scopes in short words for a table cell. */
const scopeCell = (scope: string) => scopeInWords(scopeFromOauth(scope)).join('; ');

/** "Connected apps": a table of grants with "Revoke"; `everyone` adds whose app it is (the admins' page). */
export function ConnectedAppsTable({ apps, revokeBase, everyone }: { apps: readonly ConnectedApp[]; revokeBase: string; everyone?: boolean }) {
  const headers = everyone ? ['App', 'Person', 'Access', 'Scopes', 'Last used', 'Actions'] : ['App', 'Access', 'Scopes', 'Last used', 'Actions'];
  return (
    <Table caption="Connected apps" captionHidden headers={headers} empty="No apps are connected.">
      {apps.map((a) => (
        <tr>
          <td>{a.appName}</td>
          {everyone ? <td>{a.userName ?? a.userEmail}</td> : null}
          <td>{RESOURCE_WORDS[a.resource]}</td>
          <td>{scopeCell(a.scope)}</td>
          <td>
            <Time iso={a.lastUsedAt === null ? null : new Date(a.lastUsedAt).toISOString()} />
          </td>
          <td>
            <a href={`${revokeBase}/${encodeURIComponent(a.id)}/revoke`} aria-label={`Revoke ${a.appName}`}>
              Revoke
            </a>
          </td>
        </tr>
      ))}
    </Table>
  );
}

function ConsentView({ page, consent, allowed }: { page: PageContext; consent: ConsentRequest; allowed: boolean }) {
  const { viewer, csrf } = page;
  const action = `/dashboard/authorize/${encodeURIComponent(consent.uid)}`;
  return (
    <Layout title={`Allow ${consent.clientName} to act for you?`} viewer={viewer} csrf={csrf}>
      <section aria-labelledby="consent-title" class="panel consent">
        <h2 id="consent-title">{consent.clientName} wants to use your account</h2>
        <dl class="facts">
          <dt>App</dt>
          <dd>{consent.clientName}</dd>
          <dt>Sends you back to</dt>
          <dd>
            <code>{consent.redirectHost}</code>
          </dd>
          <dt>Organisation</dt>
          <dd>{viewer.organizationName}</dd>
          <dt>Through</dt>
          <dd>{consent.resource === 'mcp' ? 'The MCP server, for AI agents' : 'The API'}</dd>
        </dl>
        <h3>It will be able to</h3>
        <ul>
          {scopeInWords(scopeFromOauth(consent.scope)).map((line) => (
            <li>{line}</li>
          ))}
        </ul>
        <p class="hint">
          Only what your role ({viewer.role}) allows, and only in {viewer.organizationName}. Its access lasts until you revoke it under "Connected apps" on your account page.
        </p>
        {allowed ? (
          <form method="post" action={action} class="actions">
            <CsrfField token={csrf} />
            <button type="submit" name="decision" value="allow">
              Allow
            </button>
            <button type="submit" name="decision" value="deny" class="button secondary">
              Deny
            </button>
          </form>
        ) : (
          <form method="post" action={action} class="actions">
            <p>Your organisation lets only admins and owners connect apps. Ask an owner, or deny the request.</p>
            <CsrfField token={csrf} />
            <button type="submit" name="decision" value="deny" class="button secondary">
              Deny
            </button>
          </form>
        )}
      </section>
    </Layout>
  );
}

function ExpiredConsent({ page }: { page: PageContext }) {
  return (
    <Layout title="This request has expired" viewer={page.viewer} csrf={page.csrf}>
      <p class="lead">The app's request is no longer waiting, or was opened in another browser. Start again from the app.</p>
    </Layout>
  );
}

function AppsSettingsView({ page, apps, settings }: { page: PageContext; apps: readonly ConnectedApp[]; settings: AppSettings }) {
  const { viewer, csrf } = page;
  const owner = viewer.role === 'owner';
  return (
    <Layout title="Connected apps" viewer={viewer} csrf={csrf} current={ALL_SETTINGS}>
      <p class="lead">Apps and AI agents members connected through OAuth. Each acts as its person, within the scopes they allowed; revoking one ends its tokens at once.</p>
      <section aria-labelledby="apps-title" class="panel">
        <h2 id="apps-title">Every connected app</h2>
        <ConnectedAppsTable apps={apps} revokeBase={SETTINGS} everyone />
      </section>
      {owner ? (
        <form method="post" action={SETTINGS} class="panel" aria-labelledby="switches-title">
          <h2 id="switches-title">Settings</h2>
          <CsrfField token={csrf} />
          <div class="field">
            <label class="checkbox">
              <input type="checkbox" name="members_may_connect" value="on" checked={settings.membersMayConnect} aria-describedby="members-hint" /> Members may connect apps
            </label>
            <p class="hint" id="members-hint">
              Off: only admins and owners can allow an app, and apps that members and viewers connected stop working until it is on again.
            </p>
          </div>
          <div class="field">
            <label class="checkbox">
              <input type="checkbox" name="agents_may_delete" value="on" checked={settings.agentsMayDelete} aria-describedby="delete-hint" /> Allow AI agents to delete
            </label>
            <p class="hint" id="delete-hint">
              On: the MCP server also offers the tools that delete projects, workflows, subscriptions, members and collaborators, to those whose role and scope allow it.
            </p>
          </div>
          <button type="submit">Save app settings</button>
        </form>
      ) : null}
      <p>
        <a href="/dashboard/members">Members</a> · <a href="/dashboard/account">Your own connected apps</a>
      </p>
    </Layout>
  );
}

function RevokeView({ page, app, action, cancelHref }: { page: PageContext; app: ConnectedApp; action: string; cancelHref: string }) {
  return (
    <Layout title={`Revoke ${app.appName}`} viewer={page.viewer} csrf={page.csrf}>
      <p class="lead">
        Revoke <strong>{app.appName}</strong>
        {app.userId === page.viewer.userId ? '' : ` (connected by ${app.userName ?? app.userEmail})`}?
      </p>
      <p>Its tokens stop working at once, on every server. To use it again, connect it again from the app.</p>
      <ConfirmActions action={action} csrf={page.csrf} label="Revoke app" cancelHref={cancelHref} cancelLabel="Keep the app connected" />
    </Layout>
  );
}

/**
 * Apps and AI agents (DASHBOARD 14, CONTRACT 17): the consent page the authorization server sends a person to,
 * the revoking of one's own connected apps (listed on the account page), and the admins' page of every
 * connected app with the owners' switches. The connected-apps service decides who may do what.
 */
export const appsPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services, authorizationServer }) => {
  const apps = services.connectedApps;

  if (authorizationServer) {
    const server = authorizationServer;
    /** The page's forms post back here and the answer redirects on to the app: CSP lets a form's redirect reach it. */
    const allowRedirect = (reply: FastifyReply, consent: ConsentRequest) => {
      const csp = String(reply.getHeader('content-security-policy') ?? '');
      reply.header('content-security-policy', csp.replace("form-action 'self'", `form-action 'self' ${consent.redirectHost ? `http://${consent.redirectHost} https://${consent.redirectHost}` : ''}`.trim()));
    };

    app.get('/authorize/:uid', { schema: { ...pageSchema(), params: UidParams } }, async (request, reply) => {
      const page = pageContext(request);
      const consent = await server.consentRequest(request.raw, reply.raw);
      if (!consent || consent.uid !== request.params.uid) return sendPage(reply, <ExpiredConsent page={page} />, 400);
      allowRedirect(reply, consent);
      return sendPage(reply, <ConsentView page={page} consent={consent} allowed={await apps.mayConnect(page.actor)} />);
    });

    app.post('/authorize/:uid', { schema: { hide: true, params: UidParams, body: DecisionBody, response: htmlResponses } }, async (request, reply) => {
      const page = pageContext(request);
      const consent = await server.consentRequest(request.raw, reply.raw);
      if (!consent || consent.uid !== request.params.uid) return sendPage(reply, <ExpiredConsent page={page} />, 400);
      if (request.body.decision === 'deny') return reply.code(303).header('location', await server.deny(request.raw, reply.raw)).send();
      const { redirectTo } = await apps.connect(page.actor, consent, () => server.allow(request.raw, reply.raw, page.actor.userId));
      return reply.code(303).header('location', redirectTo).send();
    });
  }

  app.get('/account/apps/:id/revoke', { schema: { ...pageSchema(), params: GrantParams } }, async (request, reply) => {
    const page = pageContext(request);
    const id = pathId(request.params.id, 'connected app');
    const found = (await apps.listMine(page.actor)).find((a) => a.id === id);
    if (!found) return seeOther(reply, ACCOUNT, { problem: 'That app was already revoked.' });
    return sendPage(reply, <RevokeView page={page} app={found} action={`${ACCOUNT}/apps/${encodeURIComponent(id)}/revoke`} cancelHref={ACCOUNT} />);
  });

  app.post('/account/apps/:id/revoke', { schema: { hide: true, params: GrantParams, body: FormBody({}), response: htmlResponses } }, async (request, reply) => {
    const revoked = await apps.revoke(pageContext(request).actor, pathId(request.params.id, 'connected app'));
    return seeOther(reply, ACCOUNT, { notice: `${revoked.appName} was revoked.` });
  });

  app.get('/settings/apps', { schema: pageSchema() }, async (request, reply) => {
    const page = pageContext(request);
    const [all, settings] = await Promise.all([apps.listAll(page.actor), apps.settings(page.actor)]);
    return sendPage(reply, <AppsSettingsView page={page} apps={all} settings={settings} />);
  });

  app.post('/settings/apps', { schema: { hide: true, body: SwitchesBody, response: htmlResponses } }, async (request, reply) => {
    const actor = pageContext(request).actor;
    const before = await apps.settings(actor);
    const after = await apps.setSettings(actor, { membersMayConnect: request.body.members_may_connect === 'on', agentsMayDelete: request.body.agents_may_delete === 'on' });
    const notices = [
      before.membersMayConnect !== after.membersMayConnect ? (after.membersMayConnect ? 'Members may connect apps again.' : 'Only admins and owners may connect apps now.') : null,
      before.agentsMayDelete !== after.agentsMayDelete ? (after.agentsMayDelete ? 'AI agents may now delete.' : 'AI agents may no longer delete.') : null,
    ].filter((n) => n !== null);
    return seeOther(reply, SETTINGS, { notice: notices.length > 0 ? notices.join(' ') : 'Nothing changed.' });
  });

  app.get('/settings/apps/:id/revoke', { schema: { ...pageSchema(), params: GrantParams } }, async (request, reply) => {
    const page = pageContext(request);
    const id = pathId(request.params.id, 'connected app');
    const found = (await apps.listAll(page.actor)).find((a) => a.id === id);
    if (!found) throw errors.notFound('connected app');
    return sendPage(reply, <RevokeView page={page} app={found} action={`${SETTINGS}/${encodeURIComponent(id)}/revoke`} cancelHref={SETTINGS} />);
  });

  app.post('/settings/apps/:id/revoke', { schema: { hide: true, params: GrantParams, body: FormBody({}), response: htmlResponses } }, async (request, reply) => {
    const revoked = await apps.revoke(pageContext(request).actor, pathId(request.params.id, 'connected app'));
    return seeOther(reply, SETTINGS, { notice: `${revoked.appName} (${revoked.userEmail}) was revoked.` });
  });
};
