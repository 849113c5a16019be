import type { Workspace } from '../../db/schema.js';
import type { Repositories } from '../../db/repositories/index.js';
import { errors } from '../../errors.js';
import { can, type Actor } from './actor.js';
import type { Action } from './permissions.js';
import type { ResourceKind } from '../../schemas/access.js';

/**
 * The organisation's lifecycle as every door sees it (DASHBOARD 10). A read-only workspace refuses
 * every change except the short list of section 10 (reads, sign-in and sign-out, account settings, data
 * export, revoking keys, deleting webhook subscriptions, resuming); the services that allow one of those
 * simply do not call `requireWritable`. The shape lives with the schema, which the repositories read it
 * into, so they need nothing from this layer.
 */
export type { Workspace };

export const ACTIVE_WORKSPACE: Workspace = { state: 'active', deletionAt: null };

/**
 * Whether a person may make a change that a read-only workspace refuses: their role allows it and the
 * workspace (as read with their request) is active. Doors ask it to decide which controls to offer; the
 * services still call `requireWritable` themselves.
 */
export function canChange(actor: Actor, resource: ResourceKind, action: Action): boolean {
  return can(actor, resource, action) && isWritable(actor);
}

/** Whether the actor's workspace (as read with their request) takes changes; operators' are checked in the transaction. */
export function isWritable(actor: Actor): boolean {
  return actor.type !== 'user' || actor.workspace.state === 'active';
}

export function workspaceReadOnlyError(workspace: Workspace) {
  return errors.workspaceReadOnly(workspace.deletionAt);
}

/**
 * Throws 403 `workspace_read_only` unless the actor's organisation is active. A person's request carries
 * the state read with their key or session (the API checks it before validation, in the contract's
 * order); operators and jobs have no such snapshot, so their organisation is read in the caller's
 * transaction.
 */
export async function requireWritable(repos: Repositories, actor: Actor): Promise<void> {
  const workspace = actor.type === 'user' ? actor.workspace : await repos.organizations.workspace(actor.orgId);
  // An organisation that no longer exists is not found by whatever the caller does next.
  if (workspace && workspace.state !== 'active') throw workspaceReadOnlyError(workspace);
}
