import type { AuditSource, Role, Workspace } from '../../db/schema.js';
import { errors } from '../../errors.js';
import { isAllowed, roleAllows, type Action, type Scope } from './permissions.js';
import { type ResourceKind } from '../../schemas/access.js';

/** Where a change came from, as the audit log records it. */
export interface ActorContext {
  readonly source: AuditSource;
  readonly ip: string | null;
  readonly userAgent: string | null;
  readonly requestId: string | null;
}

/**
 * A person acting through a door: an API key (keyId set) or a dashboard session (sessionId set). The role
 * is the user's current one, read on every request; a session acts with full scope.
 */
export interface UserActor {
  readonly type: 'user';
  readonly orgId: string;
  readonly userId: string;
  /** The user's e-mail, as the audit log shows the actor. */
  readonly label: string;
  readonly role: Role;
  readonly scope: Scope;
  readonly keyId: string | null;
  readonly sessionId: string | null;
  /**
   * When the session last proved it is its user (a strong sign-in, "Confirm it's you"); null for API keys
   * and for sessions that never did. Sensitive actions ask for it within the last 15 minutes.
   */
  readonly confirmedAt: number | null;
  /** The organisation's state as read with the key or session, for this request. */
  readonly workspace: Workspace;
  readonly context: ActorContext;
}

/** The operator's command line, or the service itself (jobs, the billing provider): no role limits them. */
export interface OperatorActor {
  readonly type: 'cli' | 'system';
  readonly orgId: string;
  readonly context: ActorContext;
  /** How the audit log names it when not by its type: a SCIM token's name (CONTRACT 16). */
  readonly label?: string;
}

/**
 * Whoever asks a service for a change. The API, the dashboard and the CLI each build one and call the
 * same services, which decide permissions, owner rules, events and audit rows here, once.
 */
export type Actor = UserActor | OperatorActor;

export const FULL_SCOPE: Scope = { kind: 'full' };

const NO_REQUEST = { ip: null, userAgent: null, requestId: null } as const;

export function cliActor(orgId: string): OperatorActor {
  return { type: 'cli', orgId, context: { source: 'cli', ...NO_REQUEST } };
}

export function systemActor(orgId: string): OperatorActor {
  return { type: 'system', orgId, context: { source: 'system', ...NO_REQUEST } };
}

/** The organisation's identity provider, acting through the SCIM token named `tokenName` (audit source `scim`). */
export function scimActor(orgId: string, tokenName: string, context: Omit<ActorContext, 'source'>): OperatorActor {
  return { type: 'system', orgId, label: tokenName, context: { ...context, source: 'scim' } };
}

/** The same operator acting in another organisation (CLI commands that address rows by global id). */
export function inOrg<A extends Actor>(actor: A, orgId: string): A {
  return actor.orgId === orgId ? actor : { ...actor, orgId };
}

/** Throws 403 `forbidden` unless the actor may do this: a key's scope within its user's current role (CONTRACT 9). */
export function authorize(actor: Actor, resource: ResourceKind, action: Action, roleMessage?: string): void {
  if (actor.type === 'user' && !isAllowed(actor, resource, action)) throw errors.forbidden(forbiddenMessage(actor, resource, action, roleMessage));
}

/** Whether the actor may do this; for doors that hide what a role cannot use. */
export function can(actor: Actor, resource: ResourceKind, action: Action): boolean {
  return actor.type !== 'user' || isAllowed(actor, resource, action);
}

/** The signed-in person acting on their own account; anyone else (the CLI, the system) is refused with `message`. */
export function selfActor(actor: Actor, message: string): UserActor {
  if (actor.type !== 'user') throw errors.forbidden(message);
  return actor;
}

/** The role the owner rules compare against: operators stand above every role. */
export function actingRole(actor: Actor): Role {
  return actor.type === 'user' ? actor.role : 'owner';
}

/** Names what refused: the role (what the dashboard's sessions meet), or the key's scope within a role that allows it. */
function forbiddenMessage(actor: UserActor, resource: ResourceKind, action: Action, roleMessage: string | undefined): string {
  if (actor.keyId && (roleAllows(actor.role, resource, action) || !roleMessage)) return 'this API key is not allowed to perform this action';
  return roleMessage ?? `your role (${actor.role}) does not allow this action`;
}
