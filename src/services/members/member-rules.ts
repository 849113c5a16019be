import type { Role, UserStatus } from '../../db/schema.js';
import { actingRole, can, type Actor } from '../access/actor.js';
import { ROLES } from '../../schemas/access.js';

/**
 * The member rules of CONTRACT 5, one function each, asked by the users service before it changes anything
 * and by the dashboard before it offers a control: a page never re-states a rule, it asks these.
 */

export const OWNER_RULE = 'only an owner may grant the owner role, or change or remove an owner';
export const LAST_OWNER = 'the organization must keep at least one active owner';

/** Whether the owner rule lets the actor grant, change or remove these roles. */
export function ownerRuleAllows(actor: Actor, ...roles: (Role | undefined)[]): boolean {
  return actingRole(actor) === 'owner' || !roles.includes('owner');
}

/** The roles the actor may invite with or change a member to: none without the permission. */
export function grantableRoles(actor: Actor): Role[] {
  if (!can(actor, 'users', 'update') && !can(actor, 'users', 'create')) return [];
  return ROLES.filter((role) => ownerRuleAllows(actor, role));
}

/** Whether taking this member out of the owner role (or out of the organisation) would leave it without an active owner. */
export function isLastOwner(member: { role: Role; status: UserStatus }, activeOwners: number): boolean {
  return member.role === 'owner' && member.status === 'active' && activeOwners <= 1;
}

export type MemberChange = 'change_role' | 'remove';

export interface MemberChangeRefusal {
  /** A sentence for the page. */
  message: string;
  /** The last-owner rule (a conflict), rather than a permission. */
  lastOwner: boolean;
}

/**
 * Why the actor may not change this member's role or remove them, or null when they may (the read-only
 * state is the workspace's rule, said by its banner).
 */
export function memberChangeRefusal(actor: Actor, member: { role: Role; status: UserStatus; managed?: boolean }, activeOwners: number, change: MemberChange): MemberChangeRefusal | null {
  if (!can(actor, 'users', change === 'remove' ? 'delete' : 'update')) return { message: 'Admins and owners manage members.', lastOwner: false };
  // CONTRACT 16: a provisioned member's role follows their groups at the identity provider.
  if (change === 'change_role' && member.managed) return { message: 'Managed by your identity provider: change their groups there.', lastOwner: false };
  if (!ownerRuleAllows(actor, member.role)) return { message: 'Only an owner can change or remove an owner.', lastOwner: false };
  if (isLastOwner(member, activeOwners)) {
    const message =
      change === 'remove' ? 'The only owner cannot be removed: make another member an owner first.' : 'The only owner keeps the owner role: make another member an owner first.';
    return { message, lastOwner: true };
  }
  return null;
}
