import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Role } from '../../db/schema.js';
import { DomainError, errors } from '../../errors.js';
import { sentence } from '../../lib/text.js';
import { can } from '../../services/access/actor.js';
import { grantableRoles, memberChangeRefusal } from '../../services/members/member-rules.js';
import { canChange } from '../../services/access/workspace.js';
import type { PageResult } from '../../services/shared/pagination.js';
import { ROLES } from '../../schemas/access.js';
import type { User } from '../../schemas/users.js';
import type { AppDeps } from '../../http/app-deps.js';
import { authorizeChange, pageContext, pageRefusal, pathId, seeOther, sendPage, type PageContext } from '../context.js';
import { FormBody, FormText, htmlResponses, pageSchema } from '../schemas.js';
import { ActionForm, NoValue, ConfirmActions, CsrfField, Email, errorFor, Field, Select, Table, Time, type FormError } from '../views/components.js';
import { Layout } from '../views/layout.js';

const HERE = '/dashboard/members';
const PAGE_SIZE = 50;

const ROLE_LABELS: Record<Role, string> = { owner: 'Owner', admin: 'Admin', member: 'Member', viewer: 'Viewer' };
const ROLE_OPTIONS = ROLES.map((role) => ({ value: role, label: ROLE_LABELS[role] }));
const STATUS_LABELS: Record<User['status'], string> = { active: 'Active', invited: 'Invited', suspended: 'Suspended' };

const RoleField = Type.Union(ROLES.map((role) => Type.Literal(role)));
const InviteBody = FormBody({ email: FormText(1024), role: RoleField });
const RoleBody = FormBody({ role: RoleField });
const MemberParams = Type.Object({ id: Type.String({ maxLength: 128 }) });
const MembersQuery = Type.Object({ cursor: Type.Optional(Type.String({ maxLength: 64 })) }, { additionalProperties: false });

/** What each role may do, in a line: the legend under the table (CONTRACT 9). */
const ROLE_LEGEND: readonly [Role, string][] = [
  ['owner', 'everything, including billing and making or removing owners.'],
  ['admin', 'manages members (except owners), every API key, webhooks, the audit log and exports.'],
  ['member', 'creates and changes projects, workflows and tasks, and their own API keys.'],
  ['viewer', 'reads everything and changes nothing.'],
];


const roleFieldId = (userId: string) => `role-${userId}`;

interface InviteForm {
  email: string;
  role: Role;
}

const EMPTY_INVITE: InviteForm = { email: '', role: 'member' };

interface MembersViewProps {
  page: PageContext;
  members: PageResult<User>;
  /** What the member rules count: the organisation's active owners. */
  activeOwners: number;
  /** When each invited member's link expires. */
  expiries: Map<string, number>;
  /** Members with a second factor (DASHBOARD 11's "2-step" column); shown to admins and owners. */
  twoStep: Set<string>;
  /** Members linked to the organisation's single sign-on (which counts as two-step: DASHBOARD 12). */
  linked: Set<string>;
  /** Members whose role the identity provider manages (CONTRACT 16): marked "Provisioned", their role not offered. */
  managed: Set<string>;
  /** Members the provider created or claimed. */
  provisioned: Set<string>;
  cursor?: string | undefined;
  invite?: InviteForm;
  errors?: readonly FormError[];
}

/** The rules decide which controls a row offers; a row without one says why in a line. */
function RoleCell({ page, user, activeOwners, roleOptions, formErrors, managed }: { page: PageContext; user: User; activeOwners: number; roleOptions: readonly { value: Role; label: string }[]; formErrors: readonly FormError[]; managed: boolean }) {
  const { actor, csrf } = page;
  const refusal = memberChangeRefusal(actor, { ...user, managed }, activeOwners, 'change_role');
  if (!canChange(actor, 'users', 'update') || refusal) {
    return (
      <>
        {ROLE_LABELS[user.role]}
        {refusal && can(actor, 'users', 'update') ? <p class="hint">{refusal.message}</p> : null}
      </>
    );
  }
  return (
    <form method="post" action={`${HERE}/${encodeURIComponent(user.id)}/role`} class="inline-form">
      <CsrfField token={csrf} />
      <Select
        id={roleFieldId(user.id)}
        name="role"
        label="Role"
        hiddenLabel
        options={roleOptions}
        value={user.role}
        error={errorFor(formErrors, roleFieldId(user.id))}
      />
      <button type="submit" class="button secondary">
        Save role
      </button>
    </form>
  );
}

function ActionsCell({ page, user, activeOwners }: { page: PageContext; user: User; activeOwners: number }) {
  const { actor, csrf } = page;
  if (!canChange(actor, 'users', 'delete')) return null;
  const refusal = memberChangeRefusal(actor, user, activeOwners, 'remove');
  if (refusal) return <p class="hint">{refusal.message}</p>;
  const href = `${HERE}/${encodeURIComponent(user.id)}`;
  if (user.status === 'invited') {
    return (
      <div class="row-actions">
        {canChange(actor, 'users', 'create') ? <ActionForm action={`${href}/resend`} csrf={csrf} label="Resend invitation" secondary /> : null}
        <a href={`${href}/remove`}>Cancel invitation</a>
      </div>
    );
  }
  return <a href={`${href}/remove`}>Remove</a>;
}

function StatusCell({ user, expiries }: { user: User; expiries: Map<string, number> }) {
  if (user.status !== 'invited') return <>{STATUS_LABELS[user.status]}</>;
  const expiresAt = expiries.get(user.id);
  if (expiresAt === undefined) return <>{STATUS_LABELS.invited}</>;
  const iso = new Date(expiresAt).toISOString();
  return (
    <>
      {STATUS_LABELS.invited}
      <br />
      <span class="muted">
        {expiresAt <= Date.now() ? 'Link expired ' : 'Link expires '}
        <Time iso={iso} />
      </span>
    </>
  );
}

/** The "2-step" column: a factor of their own, single sign-on (two factors at the provider), both, or neither. */
function twoStepWords(factor: boolean, sso: boolean): string {
  if (sso) return factor ? 'On · single sign-on' : 'Single sign-on';
  return factor ? 'On' : 'Off';
}

function MembersView({ page, members, activeOwners, expiries, twoStep, linked, managed, provisioned, cursor, invite = EMPTY_INVITE, errors: formErrors = [] }: MembersViewProps) {
  const { actor, csrf } = page;
  // Only what the rules let this viewer do is offered; the services refuse the rest anyway.
  const canInvite = canChange(actor, 'users', 'create');
  const showActions = canChange(actor, 'users', 'delete');
  const showTwoStep = page.actor.role === 'admin' || page.actor.role === 'owner';
  const headers = ['Name', 'Email', 'Role', 'Status', ...(showTwoStep ? ['2-step'] : []), ...(showActions ? ['Actions'] : [])];
  // The roles this viewer may grant, for the invitation and every row's select.
  const grantable = grantableRoles(actor);
  const roleOptions = ROLE_OPTIONS.filter((o) => grantable.includes(o.value));
  return (
    <Layout title="Members" viewer={page.viewer} csrf={csrf} current={HERE} errors={formErrors}>
      {canInvite ? (
        <section aria-labelledby="invite-title" class="panel">
          <h2 id="invite-title">Invite member</h2>
          <form method="post" action={`${HERE}/invite`} class="invite-form">
            <CsrfField token={csrf} />
            <Field
              id="invite-email"
              name="email"
              type="email"
              label="Email"
              value={invite.email}
              error={errorFor(formErrors, 'invite-email')}
              autocomplete="off"
              hint="The invitation link is valid for 72 hours."
            />
            <Select
              id="invite-role"
              name="role"
              label="Role"
              options={roleOptions}
              value={invite.role}
              error={errorFor(formErrors, 'invite-role')}
            />
            <button type="submit">Send invitation</button>
          </form>
        </section>
      ) : null}
      <Table caption="Members" captionHidden headers={headers} empty="No members.">
        {members.items.map((user) => (
          <tr>
            <td>
              {user.name ?? <span class="muted">{user.status === 'invited' ? 'No name yet' : 'No name set'}</span>}
              {user.id === page.viewer.userId ? <span class="muted"> (you)</span> : null}
              {provisioned.has(user.id) ? <span class="badge">Provisioned</span> : null}
            </td>
            <td class="email">
              <Email address={user.email} />
            </td>
            <td>
              <RoleCell page={page} user={user} activeOwners={activeOwners} roleOptions={roleOptions} formErrors={formErrors} managed={managed.has(user.id)} />
            </td>
            <td>
              <StatusCell user={user} expiries={expiries} />
            </td>
            {showTwoStep ? <td>{user.status === 'invited' ? <NoValue /> : twoStepWords(twoStep.has(user.id), linked.has(user.id))}</td> : null}
            {showActions ? (
              <td>
                <ActionsCell page={page} user={user} activeOwners={activeOwners} />
              </td>
            ) : null}
          </tr>
        ))}
      </Table>
      {members.nextCursor || cursor ? (
        <nav aria-label="Members pages" class="pager">
          {cursor ? <a href={HERE}>First page</a> : null}
          {members.nextCursor ? <a href={`${HERE}?cursor=${encodeURIComponent(members.nextCursor)}`}>Next page</a> : null}
        </nav>
      ) : null}
      <section aria-labelledby="roles-title" class="legend">
        <h2 id="roles-title">Roles</h2>
        <dl>
          {ROLE_LEGEND.map(([role, text]) => (
            <>
              <dt>{ROLE_LABELS[role]}</dt>
              <dd>{text}</dd>
            </>
          ))}
        </dl>
      </section>
      {showTwoStep ? (
        <p>
          Who may sign in how, and which apps may act for members: <a href="/dashboard/settings">Settings</a>.
        </p>
      ) : null}
    </Layout>
  );
}

/** Only these refusals are shown on the members page; anything else (404, faults) gets the error page. */
const MEMBER_REFUSALS = [400, 403, 409];

/** DASHBOARD 5: everyone reads the members; admins and owners invite, change roles and remove, by the services' rules. */
export const membersPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  const users = services.users;

  /** A page of members with what the rules and the table need about them. */
  async function listing(page: PageContext, cursor?: string) {
    const members = await users.listMembers(page.actor.orgId, { limit: PAGE_SIZE, cursor });
    const invited = members.items.filter((u) => u.status === 'invited').map((u) => u.id);
    const ids = members.items.map((u) => u.id);
    const [activeOwners, expiries, twoStep, linked, provisioning] = await Promise.all([
      users.activeOwnerCount(page.actor.orgId),
      users.invitationExpiries(page.actor.orgId, invited),
      services.accountSecurity.membersWithTwoStep(page.actor, ids),
      services.sso.linkedMembers(page.actor, ids),
      users.provisioning(page.actor.orgId, ids),
    ]);
    return { members, activeOwners, expiries, twoStep, linked, ...provisioning };
  }
  const firstPage = (page: PageContext) => listing(page);

  app.get('/members', { schema: pageSchema(MembersQuery) }, async (request, reply) => {
    const page = pageContext(request);
    const { cursor } = request.query;
    return sendPage(reply, <MembersView page={page} cursor={cursor} {...await listing(page, cursor)} />);
  });

  app.post('/members/invite', { schema: { hide: true, body: InviteBody, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const invite: InviteForm = { email: request.body.email ?? '', role: request.body.role };
    try {
      await users.invite(page.actor, invite);
    } catch (error) {
      const err = pageRefusal(reply, error, MEMBER_REFUSALS);
      const allowed = can(page.actor, 'users', 'create');
      const fieldOf = (name: string | undefined): string | null => {
        if (!allowed) return null;
        if (name === 'email' || (name === undefined && err.status === 409)) return 'invite-email';
        if (name === 'role' || (name === undefined && err.status === 403)) return 'invite-role';
        return null;
      };
      const formErrors: FormError[] = err.details?.length
        ? err.details.map((d) => ({ field: fieldOf(d.field), message: `${d.field === 'email' ? 'Email' : d.field} ${d.message}` }))
        : [{ field: fieldOf(undefined), message: sentence(err.message) }];
      return sendPage(reply, <MembersView page={page} {...await firstPage(page)} invite={invite} errors={formErrors} />, err.status);
    }
    return seeOther(reply, HERE, { notice: `Invitation sent to ${invite.email}.` });
  });

  // Another link for an invited member (the old one stops working), with the role they were invited with.
  app.post('/members/:id/resend', { schema: { hide: true, params: MemberParams, body: FormBody({}), response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    // The role and the workspace's state answer first, as for every change.
    authorizeChange(page.actor, 'users', 'create');
    const user = await users.get(page.actor.orgId, pathId(request.params.id, 'member'));
    if (user.status !== 'invited') throw new DomainError(409, 'conflict', `${user.email} has already accepted the invitation`);
    await users.invite(page.actor, { email: user.email, role: user.role });
    return seeOther(reply, HERE, { notice: `Invitation sent to ${user.email} again. The earlier link no longer works.` });
  });

  app.post('/members/:id/role', { schema: { hide: true, params: MemberParams, body: RoleBody, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const { id } = request.params;
    pathId(id, 'member');
    let roleNotice: string;
    try {
      const changed = await users.changeRole(page.actor, id, request.body.role);
      roleNotice = `${changed.name ?? changed.email} is now ${/^[AEIOU]/.test(ROLE_LABELS[changed.role]) ? 'an' : 'a'} ${ROLE_LABELS[changed.role]}.`;
    } catch (error) {
      const err = pageRefusal(reply, error, MEMBER_REFUSALS);
      const listing = await firstPage(page);
      // The error sits on the row's select when the row has one; a row the rules keep unchangeable has none.
      const target = listing.members.items.find((u) => u.id === id);
      const hasSelect = target !== undefined && canChange(page.actor, 'users', 'update') && !memberChangeRefusal(page.actor, target, listing.activeOwners, 'change_role');
      const formErrors: FormError[] = [{ field: hasSelect ? roleFieldId(id) : null, message: sentence(err.message) }];
      return sendPage(reply, <MembersView page={page} {...listing} errors={formErrors} />, err.status);
    }
    return seeOther(reply, HERE, { notice: roleNotice });
  });

  app.get('/members/:id/remove', { schema: { ...pageSchema(), params: MemberParams } }, async (request, reply) => {
    const page = pageContext(request);
    // The page of an action the role (or a read-only workspace) cannot take answers 403, as the action itself would.
    authorizeChange(page.actor, 'users', 'delete');
    const { id } = request.params;
    pathId(id, 'member');
    const user = await users.get(page.actor.orgId, id);
    // The owner rules answer here too: no confirmation for a removal the service would refuse.
    const refusal = memberChangeRefusal(page.actor, user, await users.activeOwnerCount(page.actor.orgId), 'remove');
    if (refusal) throw refusal.lastOwner ? errors.conflict(refusal.message) : errors.forbidden(refusal.message);
    if (user.status === 'invited') {
      return sendPage(
        reply,
        <Layout title="Cancel invitation" viewer={page.viewer} csrf={page.csrf} current={HERE}>
          <p class="lead">
            Cancel the invitation of <strong><Email address={user.email} /></strong> ({ROLE_LABELS[user.role]}) to {page.viewer.organizationName}?
          </p>
          <p>Their invitation link stops working at once. The address can be invited again later.</p>
          <ConfirmActions action={`${HERE}/${encodeURIComponent(user.id)}/remove`} csrf={page.csrf} label="Cancel invitation" cancelHref={HERE} cancelLabel="Keep the invitation" />
        </Layout>,
      );
    }
    return sendPage(
      reply,
      <Layout title="Remove member" viewer={page.viewer} csrf={page.csrf} current={HERE}>
        <p class="lead">
          Remove <strong>{user.name ?? user.email}</strong> ({user.email}, {ROLE_LABELS[user.role]}, {STATUS_LABELS[user.status].toLowerCase()}) from{' '}
          {page.viewer.organizationName}?
        </p>
        {user.id === page.viewer.userId ? (
          <p class="notice-panel warning">
            <strong>This is you.</strong> You lose access to {page.viewer.organizationName} at once and are signed out; only another admin or owner can invite you back.
          </p>
        ) : null}
        <p>They are signed out at once, and their API keys stop working from the next request on. The e-mail address can be invited again later.</p>
        <ConfirmActions action={`${HERE}/${encodeURIComponent(user.id)}/remove`} csrf={page.csrf} label="Remove member" cancelHref={HERE} cancelLabel="Keep the member" />
      </Layout>,
    );
  });

  app.post('/members/:id/remove', { schema: { hide: true, params: MemberParams, body: FormBody({}), response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const { id } = request.params;
    pathId(id, 'member');
    let removed: User;
    try {
      removed = await users.remove(page.actor, id);
    } catch (error) {
      const err = pageRefusal(reply, error, MEMBER_REFUSALS);
      return sendPage(reply, <MembersView page={page} {...await firstPage(page)} errors={[{ field: null, message: sentence(err.message) }]} />, err.status);
    }
    return seeOther(reply, HERE, {
      notice: removed.status === 'invited' ? `Invitation of ${removed.email} cancelled.` : `${removed.name ?? removed.email} removed from ${page.viewer.organizationName}.`,
    });
  });
};

