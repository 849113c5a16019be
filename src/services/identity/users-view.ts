import { toIso } from '../../lib/time.js';
import type { UserRow } from '../../db/schema.js';
import type { User, UserListItem } from '../../schemas/users.js';

export function toUser(row: UserRow): User {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    status: row.status,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export function toUserListItem(row: UserRow): UserListItem {
  return { id: row.id, email: row.email, name: row.name, role: row.role, created_at: toIso(row.created_at) };
}

/** Emails are matched case-insensitively within an organisation. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
