import { Type } from '@sinclair/typebox';
import { InviteUserBody, ListUsersQuery, UpdateUserBody } from '../../../schemas/users.js';
import { toListEnvelope } from '../../../services/shared/pagination.js';
import { done, Id, input, page, tool, type McpTool } from '../mcp-tool.js';

/** The organisation's members. */
export const MEMBER_TOOLS: readonly McpTool[] = [
  tool({
    name: 'list_members',
    title: 'List members',
    description: 'Members of the organisation with their roles, newest first; invited ones included, suspended ones only when asked for.',
    input: input({ status: Type.Optional(ListUsersQuery.properties.status), ...page }),
    resource: 'users',
    action: 'read',
    idempotent: true,
    run: async (actor, { limit = 20, cursor, status }, s) => toListEnvelope(await s.users.list(actor.orgId, { limit, cursor }, status)),
  }),
  tool({
    name: 'get_member',
    title: 'Read a member',
    description: 'One member by id.',
    input: input({ user_id: Id('member') }),
    resource: 'users',
    action: 'read',
    idempotent: true,
    run: (actor, { user_id }, s) => s.users.get(actor.orgId, user_id),
  }),
  tool({
    name: 'invite_member',
    title: 'Invite a member',
    description: 'Invites someone by e-mail with a role; they get an invitation mail.',
    input: input(InviteUserBody.properties),
    resource: 'users',
    action: 'create',
    idempotent: false,
    run: (actor, body, s) => s.users.invite(actor, body),
  }),
  tool({
    name: 'change_member_role',
    title: "Change a member's role",
    description: 'Admins and owners; only an owner makes or unmakes an owner.',
    input: input({ user_id: Id('member'), ...UpdateUserBody.properties }),
    resource: 'users',
    action: 'update',
    idempotent: true,
    run: (actor, { user_id, role }, s) => s.users.changeRole(actor, user_id, role),
  }),
  tool({
    name: 'remove_member',
    title: 'Remove a member',
    description: 'Removes a member from the organisation; their keys and sessions end. The last owner cannot be removed.',
    input: input({ user_id: Id('member') }),
    resource: 'users',
    action: 'delete',
    deletes: true,
    idempotent: true,
    run: async (actor, { user_id }, s) => (await s.users.remove(actor, user_id), done),
  }),
];
