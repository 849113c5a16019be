import type { Role } from '../db/schema.js';

// The words of the access model as requests and responses carry them: the roles, and the resources a key's
// scope names. The rules that use them are in services/access/permissions.ts.

export type ResourceKind = 'projects' | 'users' | 'webhooks' | 'workflows' | 'tasks' | 'events' | 'audit_log' | 'api_keys' | 'exports';

/** In the order scopes are written and the dashboard's "Restricted" form lists them (CONTRACT 9 and 13). */
export const RESOURCE_KINDS: readonly ResourceKind[] = ['projects', 'users', 'webhooks', 'workflows', 'tasks', 'events', 'audit_log', 'api_keys', 'exports'];
export const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'viewer'];

/** How a scope is described wherever one is asked for (API validation, CLI help, dashboard). */
export const SCOPE_HELP = `read, full, or a list of ${RESOURCE_KINDS.join(', ')} (each optionally :read)`;
