import type { Role, Workspace } from '../db/schema.js';

export type ResourceKind = 'projects' | 'users' | 'webhooks';
export type Action = 'read' | 'create' | 'update' | 'delete';

export const RESOURCE_KINDS: readonly ResourceKind[] = ['projects', 'users', 'webhooks'];
export const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'viewer'];

/** A key's scope: `read`, `full`, or per-resource grants such as `projects,users:read`. */
export type Scope =
  | { kind: 'read' }
  | { kind: 'full' }
  | { kind: 'resources'; grants: ReadonlyMap<ResourceKind, 'read' | 'full'> };

export interface Principal {
  readonly keyId: string;
  readonly orgId: string;
  readonly userId: string;
  /** The key's user's e-mail: how the audit log names the actor. */
  readonly email: string;
  readonly role: Role;
  readonly scope: Scope;
  /** The organisation's lifecycle state when the key was verified (cached principals carry it too). */
  readonly workspace: Workspace;
}

/** Parses a scope string; null when it is not one of the accepted forms. */
export function parseScope(text: string): Scope | null {
  const value = text.trim();
  if (value === 'read') return { kind: 'read' };
  if (value === 'full') return { kind: 'full' };
  const grants = new Map<ResourceKind, 'read' | 'full'>();
  for (const part of value.split(',')) {
    const [kind, access, extra] = part.trim().split(':');
    if (extra !== undefined || !RESOURCE_KINDS.includes(kind as ResourceKind)) return null;
    if (access !== undefined && access !== 'read') return null;
    const level = access === 'read' ? 'read' : 'full';
    // A repeated kind keeps its widest grant.
    if (grants.get(kind as ResourceKind) !== 'full') grants.set(kind as ResourceKind, level);
  }
  return grants.size > 0 ? { kind: 'resources', grants } : null;
}

export function formatScope(scope: Scope): string {
  if (scope.kind !== 'resources') return scope.kind;
  return RESOURCE_KINDS.filter((k) => scope.grants.has(k))
    .map((k) => (scope.grants.get(k) === 'read' ? `${k}:read` : k))
    .join(',');
}

export function scopeAllows(scope: Scope, resource: ResourceKind, action: Action): boolean {
  switch (scope.kind) {
    case 'full':
      return true;
    case 'read':
      return action === 'read';
    case 'resources': {
      const grant = scope.grants.get(resource);
      return grant === 'full' || (grant === 'read' && action === 'read');
    }
  }
}

/** The role matrix of CONTRACT section 9. */
export function roleAllows(role: Role, resource: ResourceKind, action: Action): boolean {
  if (action === 'read') return true;
  switch (resource) {
    case 'projects':
      return action === 'delete' ? role === 'owner' || role === 'admin' : role !== 'viewer';
    case 'users':
    case 'webhooks':
      return role === 'owner' || role === 'admin';
  }
}

/** A key's scope intersected with its user's current role; a dashboard session has full scope. */
export function isAllowed(who: { readonly role: Role; readonly scope: Scope }, resource: ResourceKind, action: Action): boolean {
  return scopeAllows(who.scope, resource, action) && roleAllows(who.role, resource, action);
}
