import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Role } from '../../../db/schema.js';
import { can } from '../../../services/actor.js';
import type { PageResult } from '../../../services/pagination.js';
import { ROLES } from '../../../services/permissions.js';
import type { User } from '../../../services/users-view.js';
import type { AppDeps } from '../../app-deps.js';
import { authorizeChange, pageContext, pageRefusal, pathId, seeOther, sendPage, type PageContext } from '../context.js';
import { FormBody, FormText, htmlResponses, pageSchema } from '../schemas.js';
import { ConfirmActions, CsrfField, errorFor, Field, Select, Table, type FormError } from '../views/components.js';
import { Layout } from '../views/layout.js';

const HERE = '/dashboard/members';
const PAGE_SIZE = 50;

const ROLE_LABELS: Record<Role, string> = { owner: 'Owner', admin: 'Admin', member: 'Member', viewer: 'Viewer' };
const ROLE_OPTIONS = ROLES.map((role) => ({ value: role, label: ROLE_LABELS[role] }));
const STATUS_LABELS: Record<User['status'], string> = { active: 'Active', invited: 'Invited' };

/** `?done=` codes and the fixed sentences they stand for: the query text itself is never shown. */
const NOTICES: Record<string, string> = {
  invited: 'Invitation sent.',
  role_saved: 'Role saved.',
  removed: 'Member removed.',
};

const RoleField = Type.Union(ROLES.map((role) => Type.Literal(role)));
const InviteBody = FormBody({ email: FormText(1024), role: RoleField });
const RoleBody = FormBody({ role: RoleField });
const MemberParams = Type.Object({ id: Type.String({ maxLength: 128 }) });
const MembersQuery = Type.Object(
  { cursor: Type.Optional(Type.String({ maxLength: 64 })), done: Type.Optional(Type.String({ maxLength: 32 })) },
  { additionalProperties: false },
);


const roleFieldId = (userId: string) => `role-${userId}`;

interface InviteForm {
  email: string;
  role: Role;
}

const EMPTY_INVITE: InviteForm = { email: '', role: 'member' };

interface MembersViewProps {
  page: PageContext;
  members: PageResult<User>;
  cursor?: string | undefined;
  invite?: InviteForm;
  errors?: readonly FormError[];
  notice?: string | null;
}

function MembersView({ page, members, cursor, invite = EMPTY_INVITE, errors: formErrors = [], notice }: MembersViewProps) {
  const { actor, csrf } = page;
  // Hiding what a role cannot use; the services refuse it anyway.
  const canInvite = can(actor, 'users', 'create');
  const canChangeRole = can(actor, 'users', 'update');
  const canRemove = can(actor, 'users', 'delete');
  const headers = ['Name', 'Email', 'Role', 'Status', ...(canRemove ? ['Actions'] : [])];
  return (
    <Layout title="Members" viewer={page.viewer} csrf={csrf} current={HERE} errors={formErrors} notice={notice}>
      <Table caption="Members" headers={headers} empty="No members.">
        {members.items.map((user) => (
          <tr>
            <td>{user.name ?? <span class="muted">Not set yet</span>}</td>
            <td>{user.email}</td>
            <td>
              {canChangeRole ? (
                <form method="post" action={`${HERE}/${encodeURIComponent(user.id)}/role`} class="inline-form">
                  <CsrfField token={csrf} />
                  <Select
                    id={roleFieldId(user.id)}
                    name="role"
                    label="Role"
                    hiddenLabel
                    options={ROLE_OPTIONS}
                    value={user.role}
                    error={errorFor(formErrors, roleFieldId(user.id))}
                  />
                  <button type="submit" class="button secondary">
                    Save role
                  </button>
                </form>
              ) : (
                ROLE_LABELS[user.role]
              )}
            </td>
            <td>{STATUS_LABELS[user.status]}</td>
            {canRemove ? (
              <td>
                <a href={`${HERE}/${encodeURIComponent(user.id)}/remove`}>Remove</a>
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
      {canInvite ? (
        <section aria-labelledby="invite-title" class="panel">
          <h2 id="invite-title">Invite member</h2>
          <form method="post" action={`${HERE}/invite`}>
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
            <Select id="invite-role" name="role" label="Role" options={ROLE_OPTIONS} value={invite.role} error={errorFor(formErrors, 'invite-role')} />
            <button type="submit">Send invitation</button>
          </form>
        </section>
      ) : null}
    </Layout>
  );
}

/** Only these refusals are shown on the members page; anything else (404, faults) gets the error page. */
const MEMBER_REFUSALS = [400, 403, 409];

/** DASHBOARD 5: everyone reads the members; admins and owners invite, change roles and remove, by the services' rules. */
export const membersPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  const users = services.users;

  const firstPage = (page: PageContext) => users.listMembers(page.actor.orgId, { limit: PAGE_SIZE });

  app.get('/members', { schema: pageSchema(MembersQuery) }, async (request, reply) => {
    const page = pageContext(request);
    const { cursor, done } = request.query;
    const members = await users.listMembers(page.actor.orgId, { limit: PAGE_SIZE, cursor });
    const notice = done ? (NOTICES[done] ?? null) : null;
    return sendPage(reply, <MembersView page={page} members={members} cursor={cursor} notice={notice} />);
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
      return sendPage(reply, <MembersView page={page} members={await firstPage(page)} invite={invite} errors={formErrors} />, err.status);
    }
    return seeOther(reply, `${HERE}?done=invited`);
  });

  app.post('/members/:id/role', { schema: { hide: true, params: MemberParams, body: RoleBody, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const { id } = request.params;
    pathId(id, 'member');
    try {
      await users.changeRole(page.actor, id, request.body.role);
    } catch (error) {
      const err = pageRefusal(reply, error, MEMBER_REFUSALS);
      const field = can(page.actor, 'users', 'update') ? roleFieldId(id) : null;
      const formErrors: FormError[] = [{ field, message: sentence(err.message) }];
      return sendPage(reply, <MembersView page={page} members={await firstPage(page)} errors={formErrors} />, err.status);
    }
    return seeOther(reply, `${HERE}?done=role_saved`);
  });

  app.get('/members/:id/remove', { schema: { ...pageSchema(), params: MemberParams } }, async (request, reply) => {
    const page = pageContext(request);
    // The page of an action the role (or a read-only workspace) cannot take answers 403, as the action itself would.
    authorizeChange(page.actor, 'users', 'delete');
    const { id } = request.params;
    pathId(id, 'member');
    const user = await users.get(page.actor.orgId, id);
    return sendPage(
      reply,
      <Layout title="Remove member" viewer={page.viewer} csrf={page.csrf} current={HERE}>
        <p class="lead">
          Remove <strong>{user.name ?? user.email}</strong> ({user.email}, {ROLE_LABELS[user.role]}, {STATUS_LABELS[user.status].toLowerCase()}) from{' '}
          {page.viewer.organizationName}?
        </p>
        <p>
          {user.status === 'invited'
            ? 'Their invitation link stops working at once.'
            : 'They are signed out at once, and their API keys stop working from the next request on.'}{' '}
          The e-mail address can be invited again later.
        </p>
        <ConfirmActions action={`${HERE}/${encodeURIComponent(user.id)}/remove`} csrf={page.csrf} label="Remove member" cancelHref={HERE} />
      </Layout>,
    );
  });

  app.post('/members/:id/remove', { schema: { hide: true, params: MemberParams, body: FormBody({}), response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const { id } = request.params;
    pathId(id, 'member');
    try {
      await users.remove(page.actor, id);
    } catch (error) {
      const err = pageRefusal(reply, error, MEMBER_REFUSALS);
      return sendPage(reply, <MembersView page={page} members={await firstPage(page)} errors={[{ field: null, message: sentence(err.message) }]} />, err.status);
    }
    return seeOther(reply, `${HERE}?done=removed`);
  });
};

/** A service message as a sentence on the page: capitalised, with a full stop. */
function sentence(message: string): string {
  const text = message.charAt(0).toUpperCase() + message.slice(1);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}
