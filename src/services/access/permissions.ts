import type { AppResource, Role, Workspace } from '../../db/schema.js';
import { RESOURCE_KINDS, type ResourceKind } from '../../schemas/access.js';

/**
 * `finish` is marking a task done, approving or rejecting it: a change (a `:read` grant does not cover it)
 * that every role may make on a task assigned to them; the task decides (tasks-service `mayFinishTask`).
 */
export type Action = 'read' | 'create' | 'update' | 'delete' | 'finish';

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
  /** When the key expires (ms); null: never. An expired key is refused with its own message (CONTRACT 16). */
  readonly expiresAt: number | null;
  /**
   * Set for an OAuth access token (CONTRACT 17): the app's name and the resource the token is bound to; then
   * `keyId` is the grant's id. Null for an API key.
   */
  readonly app: { readonly name: string; readonly resource: AppResource } | null;
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

const isManager = (role: Role) => role === 'owner' || role === 'admin';

/** The role matrix of CONTRACT sections 9 and 13 (and docs/workflows.md for workflows and tasks). */
export function roleAllows(role: Role, resource: ResourceKind, action: Action): boolean {
  switch (resource) {
    case 'audit_log':
    case 'exports':
      // The audit log and exports hold the whole organisation: managers only, reads included.
      return isManager(role);
    case 'api_keys':
      // Everyone manages their own keys; whose keys a role reaches is the service's rule.
      return true;
    case 'events':
      return action === 'read';
    default:
  }
  if (action === 'read') return true;
  switch (resource) {
    case 'projects':
      return action === 'delete' ? isManager(role) : role !== 'viewer';
    case 'workflows':
      return role !== 'viewer';
    case 'tasks':
      return action === 'finish' || role !== 'viewer';
    case 'users':
    case 'webhooks':
      return isManager(role);
  }
}

/**
 * Whether `inner` grants nothing `outer` does not: what a key may give a key it creates (CONTRACT 13). `read`
 * is every kind read; `full`, every kind in full.
 */
export function scopeCovers(outer: Scope, inner: Scope): boolean {
  const grant = (scope: Scope, kind: ResourceKind): 'read' | 'full' | undefined =>
    scope.kind === 'full' ? 'full' : scope.kind === 'read' ? 'read' : scope.grants.get(kind);
  return RESOURCE_KINDS.every((kind) => {
    const wanted = grant(inner, kind);
    const held = grant(outer, kind);
    return wanted === undefined || held === 'full' || (wanted === 'read' && held === 'read');
  });
}

/** A key's scope intersected with its user's current role; a dashboard session has full scope. */
export function isAllowed(who: { readonly role: Role; readonly scope: Scope }, resource: ResourceKind, action: Action): boolean {
  return scopeAllows(who.scope, resource, action) && roleAllows(who.role, resource, action);
}
