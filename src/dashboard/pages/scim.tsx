import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppDeps } from '../../http/app-deps.js';
import type { ProjectRole, ScimDefaultRole, ScimGroupRole } from '../../db/schema.js';
import { PROJECT_ROLES, SCIM_DEFAULT_ROLES, SCIM_GROUP_ROLES, SCIM_TOKENS_LIVE, type ScimSettingsView } from '../../services/provisioning/scim-settings-service.js';
import { pageContext, pathId, seeOther, sendPage, type PageContext } from '../context.js';
import { flashSecret } from '../flash.js';
import { FormBody, FormText, htmlResponses, pageSchema } from '../schemas.js';
import { ConfirmActions, CsrfField, Field, Select, Table, Time } from '../views/components.js';
import { Layout, SETTINGS } from '../views/layout.js';

const HERE = '/dashboard/settings/scim';

const ROLE_WORDS: Record<ScimGroupRole, string> = { viewer: 'Viewer', member: 'Member', admin: 'Admin' };
const PROJECT_ROLE_WORDS: Record<ProjectRole, string> = { viewer: 'Viewer', editor: 'Editor', manager: 'Manager' };

const TokenBody = FormBody({ name: FormText(200) });
const MappingBody = FormBody({
  group: Type.String({ maxLength: 128 }),
  org_role: Type.Union([Type.Literal('keep'), Type.Literal('none'), ...SCIM_GROUP_ROLES.map((r) => Type.Literal(r))]),
  project: Type.Optional(Type.String({ maxLength: 128 })),
  project_role: Type.Optional(Type.Union([Type.Literal('none'), ...PROJECT_ROLES.map((r) => Type.Literal(r))])),
});
const DefaultRoleBody = FormBody({ default_role: Type.Union(SCIM_DEFAULT_ROLES.map((r) => Type.Literal(r))) });
const TokenParams = Type.Object({ id: Type.String({ maxLength: 128 }) });

function NewToken({ token }: { token: string }) {
  return (
    <section aria-labelledby="new-token-title" class="panel">
      <h2 id="new-token-title">Your new SCIM token</h2>
      <p>Paste it into your identity provider now: it is shown only this once.</p>
      <div class="secret">
        <label for="new-token">Your new SCIM token</label>
        <input id="new-token" type="text" value={token} readOnly autocomplete="off" />
        <button type="button" data-copy-target="new-token" hidden>
          Copy
        </button>
      </div>
    </section>
  );
}

function mappingWords(group: ScimSettingsView['groups'][number]): string {
  const parts = [group.orgRole ? ROLE_WORDS[group.orgRole] : 'No organisation role'];
  for (const p of group.projects) parts.push(`${PROJECT_ROLE_WORDS[p.role]} on ${p.projectName}`);
  return parts.join('; ');
}

function ScimView({ page, view, projects }: { page: PageContext; view: ScimSettingsView; projects: { id: string; name: string }[] }) {
  const created = flashSecret(page.viewer.flash, 'scim_token');
  const { csrf } = page;
  const groupOptions = view.groups.map((g) => ({ value: g.id, label: g.displayName }));
  return (
    <Layout title="Provisioning (SCIM)" viewer={page.viewer} csrf={csrf} current={SETTINGS}>
      {created ? <NewToken token={created.value} /> : null}
      <p class="lead">
        Your identity provider (Okta, Microsoft Entra ID, OneLogin, JumpCloud, authentik) creates, updates and suspends members here by itself. A member it sets to
        inactive loses every session and API key at once, on every server.
      </p>
      <section aria-labelledby="connect-title" class="panel">
        <h2 id="connect-title">Connect your provider</h2>
        <div class="secret">
          <label for="base-url">SCIM base URL</label>
          <input id="base-url" type="text" value={view.baseUrl} readOnly autocomplete="off" />
        </div>
        <p class="hint">
          In the provider: the base URL above, authentication "HTTP header" (bearer token) with a SCIM token from below, and userName mapped to the work e-mail. Step by step
          for Okta and Entra ID: docs/provisioning.md in the service's documentation.
        </p>
      </section>

      <section aria-labelledby="tokens-title" class="panel">
        <h2 id="tokens-title">SCIM tokens</h2>
        <Table caption="SCIM tokens" captionHidden headers={['Name', 'Prefix', 'Created', 'Last used', 'Actions']} empty="No SCIM tokens yet.">
          {view.tokens.map((t) => (
            <tr>
              <td>{t.name}</td>
              <td>
                <code>{t.prefix}…</code>
              </td>
              <td>
                <Time iso={new Date(t.createdAt).toISOString()} />
              </td>
              <td>
                <Time iso={t.lastUsedAt === null ? null : new Date(t.lastUsedAt).toISOString()} />
              </td>
              <td>
                <a href={`${HERE}/tokens/${encodeURIComponent(t.id)}/revoke`}>Revoke</a>
              </td>
            </tr>
          ))}
        </Table>
        {view.tokens.length < SCIM_TOKENS_LIVE ? (
          <form method="post" action={`${HERE}/tokens`}>
            <CsrfField token={csrf} />
            <Field id="name" label="Token name" hint="What the token is for, e.g. Okta." maxLength={100} autocomplete="off" />
            <button type="submit">Create SCIM token</button>
          </form>
        ) : (
          <p class="hint">Two tokens are valid at once, to rotate: revoke the old one once the provider uses the new one, then you can create another.</p>
        )}
      </section>

      <section aria-labelledby="mappings-title" class="panel">
        <h2 id="mappings-title">Group mappings</h2>
        <p>
          A provisioned member's role is the highest role among their mapped groups, or the default role when they are in none. Roles of provisioned members change only here and
          at the provider; owners are never changed.
        </p>
        <Table caption="Groups" captionHidden headers={['Group', 'Members', 'Mapped to']} empty="The provider has not pushed any groups yet.">
          {view.groups.map((g) => (
            <tr>
              <td>{g.displayName}</td>
              <td>{g.members}</td>
              <td>{mappingWords(g)}</td>
            </tr>
          ))}
        </Table>
        {view.groups.length > 0 ? (
          <form method="post" action={`${HERE}/mappings`} class="mapping-form">
            <CsrfField token={csrf} />
            <Select id="group" label="Group" options={groupOptions} />
            <Select
              id="org_role"
              label="Organisation role"
              options={[{ value: 'keep', label: 'Unchanged' }, { value: 'none', label: 'None' }, ...SCIM_GROUP_ROLES.map((r) => ({ value: r, label: ROLE_WORDS[r] }))]}
              value="keep"
            />
            <Select id="project" label="Project" options={[{ value: '', label: 'No project' }, ...projects.map((p) => ({ value: p.id, label: p.name }))]} value="" />
            <Select id="project_role" label="Project role" options={[{ value: 'none', label: 'None (remove)' }, ...PROJECT_ROLES.map((r) => ({ value: r, label: PROJECT_ROLE_WORDS[r] }))]} value="none" />
            <button type="submit">Save mapping</button>
          </form>
        ) : null}
      </section>

      <section aria-labelledby="default-title" class="panel">
        <h2 id="default-title">Default role</h2>
        <form method="post" action={`${HERE}/default-role`}>
          <CsrfField token={csrf} />
          <Select
            id="default_role"
            label="Default role"
            options={SCIM_DEFAULT_ROLES.map((r) => ({ value: r, label: ROLE_WORDS[r] }))}
            value={view.defaultRole}
          />
          <p class="hint">
            For provisioned members in no mapped group. {view.provisionedMembers === 1 ? '1 member is' : `${view.provisionedMembers} members are`} provisioned.
          </p>
          <button type="submit" class="button secondary">
            Save default role
          </button>
        </form>
      </section>
      <p>
        <a href="/dashboard/members">Members</a> · <a href="/dashboard/settings/security">Organisation security</a> · <a href="/dashboard/settings/sso">Single sign-on</a>
      </p>
    </Layout>
  );
}

/** Provisioning (DASHBOARD 14; owners): SCIM tokens, the base URL, group mappings and the default role. */
export const scimPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  const scim = services.scimSettings;

  app.get('/settings/scim', { schema: pageSchema() }, async (request, reply) => {
    const page = pageContext(request);
    const [view, projects] = await Promise.all([scim.view(page.actor), services.projects.names(page.actor)]);
    return sendPage(reply, <ScimView page={page} view={view} projects={projects} />);
  });

  app.post('/settings/scim/tokens', { schema: { hide: true, body: TokenBody, response: htmlResponses } }, async (request, reply) => {
    const created = await scim.createToken(pageContext(request).actor, request.body.name ?? '');
    return seeOther(reply, HERE, { notice: `SCIM token "${created.name}" created.`, secret: { kind: 'scim_token', id: created.id, value: created.token } });
  });

  app.get('/settings/scim/tokens/:id/revoke', { schema: { ...pageSchema(), params: TokenParams } }, async (request, reply) => {
    const page = pageContext(request);
    const id = pathId(request.params.id, 'SCIM token');
    const token = (await scim.listTokens(page.actor)).find((t) => t.id === id);
    if (!token) return seeOther(reply, HERE, { problem: 'That SCIM token was already revoked.' });
    return sendPage(
      reply,
      <Layout title="Revoke SCIM token" viewer={page.viewer} csrf={page.csrf}>
        <p class="lead">
          Revoke the SCIM token <strong>{token.name}</strong> (<code>{token.prefix}…</code>)?
        </p>
        <p>The provider using it is refused from its next request on: members stop being provisioned until it has a new token.</p>
        <ConfirmActions action={`${HERE}/tokens/${encodeURIComponent(token.id)}/revoke`} csrf={page.csrf} label="Revoke token" cancelHref={HERE} cancelLabel="Keep the token" />
      </Layout>,
    );
  });

  app.post('/settings/scim/tokens/:id/revoke', { schema: { hide: true, params: TokenParams, body: FormBody({}), response: htmlResponses } }, async (request, reply) => {
    const revoked = await scim.revokeToken(pageContext(request).actor, pathId(request.params.id, 'SCIM token'));
    return seeOther(reply, HERE, { notice: `SCIM token "${revoked.name}" revoked.` });
  });

  app.post('/settings/scim/mappings', { schema: { hide: true, body: MappingBody, response: htmlResponses } }, async (request, reply) => {
    const { group, org_role, project, project_role } = request.body;
    const changed = await scim.saveMapping(pageContext(request).actor, {
      groupId: group,
      orgRole: org_role === 'keep' ? undefined : org_role === 'none' ? null : org_role,
      projectId: project ? project : null,
      projectRole: project_role === undefined || project_role === 'none' ? null : project_role,
    });
    return seeOther(reply, HERE, { notice: `Mapping saved.${changed > 0 ? ` ${changed === 1 ? '1 member\'s role' : `${changed} members' roles`} changed.` : ''}` });
  });

  app.post('/settings/scim/default-role', { schema: { hide: true, body: DefaultRoleBody, response: htmlResponses } }, async (request, reply) => {
    const role: ScimDefaultRole = request.body.default_role;
    const changed = await scim.setDefaultRole(pageContext(request).actor, role);
    return seeOther(reply, HERE, { notice: `Default role saved: ${ROLE_WORDS[role]}.${changed > 0 ? ` ${changed === 1 ? '1 member\'s role' : `${changed} members' roles`} changed.` : ''}` });
  });
};

