import { Type, type Static } from '@sinclair/typebox';
import type { Role as RoleName } from '../db/schema.js';
import { EMAIL_MAX_LENGTH } from '../lib/email.js';
import { ROLES } from './access.js';
import { ListEnvelope, PageQuery, Timestamp } from './common.js';

// An enum (not a union of literals) so a wrong value reports the accepted ones.
const Role = Type.Unsafe<RoleName>({ type: 'string', enum: [...ROLES], title: 'Role', description: 'owner, admin, member or viewer.' });
const UserStatus = Type.Unsafe<'invited' | 'active' | 'suspended'>({
  type: 'string',
  enum: ['invited', 'active', 'suspended'],
  title: 'UserStatus',
  description: '`suspended`: deprovisioned by the identity provider (SCIM `active: false`); cannot sign in, keys refused.',
});
const UserName = Type.Union([Type.String(), Type.Null()], { description: 'null while the user is invited.' });

export const User = Type.Object(
  {
    id: Type.String({ examples: ['user_0123456789abcdefghijklmn'] }),
    email: Type.String(),
    name: UserName,
    role: Role,
    status: UserStatus,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'User', title: 'User' },
);
export type User = Static<typeof User>;

export const UserListItem = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: UserName,
  role: Role,
  created_at: Timestamp,
}, { title: 'UserListItem' });
export type UserListItem = Static<typeof UserListItem>;

export const UserList = ListEnvelope(UserListItem, 'UserList');

export const ListUsersQuery = Type.Object({
  ...PageQuery,
  status: Type.Optional(
    Type.Unsafe<'invited' | 'active' | 'suspended'>({
      type: 'string',
      enum: ['invited', 'active', 'suspended'],
      description: 'Only members of this status. Without it, invited and active members: suspended ones are listed only when asked for (CONTRACT 16).',
    }),
  ),
});

export const InviteUserBody = Type.Object(
  {
    email: Type.String({
      format: 'email',
      maxLength: EMAIL_MAX_LENGTH,
      description: 'local@domain, the domain with at least one dot; matched case-insensitively.',
    }),
    role: Role,
  },
  { additionalProperties: false, title: 'InviteUserRequest' },
);

export const UpdateUserBody = Type.Object({ role: Role }, { additionalProperties: false, title: 'UpdateUserRequest', description: 'Role is the only field that can change.' });
