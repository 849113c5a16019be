import type { AuditOutcome } from '../../db/schema.js';
import type { Repositories } from '../../db/repositories/index.js';
import { newId } from '../../lib/ids.js';
import type { Actor } from '../access/actor.js';
import { runName } from '../shared/run-name.js';

/**
 * The audit log's actions (DASHBOARD 8), past tense. `member.added` (an operator adding an active member
 * directly from the CLI) and `organization.created` go beyond the contract's list; docs/decisions.md says so.
 * A list, not only a type: the audit log's "Action" filter offers every one by name.
 */
export const AUDIT_ACTIONS = [
  'organization.created',
  'project.created',
  'project.updated',
  'project.deleted',
  'project.collaborator_added',
  'project.collaborator_role_changed',
  'project.collaborator_removed',
  'workflow.created',
  'workflow.updated',
  'workflow.deleted',
  'workflow_run.started',
  'workflow_run.completed',
  'workflow_run.failed',
  'task.created',
  'task.updated',
  'task.assigned',
  'task.completed',
  'task.cancelled',
  'member.invited',
  'member.added',
  'member.role_changed',
  'member.removed',
  'invitation.accepted',
  'api_key.created',
  'api_key.revoked',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_rotated',
  'webhook.test_sent',
  'webhook.disabled',
  'webhook.enabled',
  'delivery.replayed',
  'user.signed_in',
  'user.sign_in_failed',
  'user.signed_out',
  'user.password_changed',
  'user.name_changed',
  'user.mfa_enabled',
  'user.mfa_disabled',
  'user.passkey_added',
  'user.passkey_removed',
  'user.recovery_codes_generated',
  'user.recovery_code_used',
  'user.session_revoked',
  'user.two_step_locked',
  'organization.security_changed',
  'sso.connection_saved',
  'sso.connection_deleted',
  'sso.domain_added',
  'sso.domain_verified',
  'sso.domain_removed',
  'sso.domain_unverified',
  'sso.required',
  'sso.not_required',
  'sso.identity_linked',
  'sso.break_glass',
  'export.requested',
  'export.downloaded',
  'audit_log.exported',
  'subscription.cancelled',
  'subscription.resumed',
  'member.provisioned',
  'member.updated',
  'member.suspended',
  'member.reactivated',
  'scim_group.created',
  'scim_group.updated',
  'scim_group.deleted',
  'scim.token_created',
  'scim.token_revoked',
  'scim.mapping_saved',
  'scim.default_role_changed',
  'organization.key_lifetime_changed',
  'organization.apps_settings_changed',
  'app.connected',
  'app.revoked',
  'mcp.tool_called',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditTarget {
  type: string;
  id: string;
  /** How the target was named at the time (a project's name, a member's e-mail). */
  label?: string | null;
}

/** A user as an audit target: named by their e-mail at the time. */
export function userTarget(user: { id: string; email: string }): AuditTarget {
  return { type: 'user', id: user.id, label: user.email };
}

export function keyTarget(row: { id: string; name: string | null; key_prefix: string }): AuditTarget {
  return { type: 'api_key', id: row.id, label: row.name ?? row.key_prefix };
}

/**
 * Changed fields as old → new. Never pass a secret, key, token or password here. A value that is the id of a
 * person, project, workflow or run gets its name beside it (`old_label`, `new_label`), read when the row is
 * written: the row still reads "Mia Member" after Mia is renamed or removed (DASHBOARD 1).
 */
export type AuditChanges = Record<string, AuditChange>;
export interface AuditChange {
  old: unknown;
  new: unknown;
  old_label?: string;
  new_label?: string;
}

/** Ids that name something a person knows by its name. */
const REFERENCE = /^(user|proj|wf|run)_[a-z0-9]{8,}$/;

async function nameOf(repos: Repositories, orgId: string, value: unknown): Promise<string | null> {
  if (typeof value !== 'string') return null;
  const kind = REFERENCE.exec(value)?.[1];
  switch (kind) {
    case 'user': {
      const user = await repos.users.findById(orgId, value);
      return user ? (user.name ?? user.email) : null;
    }
    case 'proj':
      return (await repos.projects.findById(orgId, value))?.name ?? null;
    case 'wf':
      return (await repos.workflows.findById(orgId, value))?.name ?? null;
    case 'run': {
      const run = await repos.runs.findById(orgId, value);
      return run ? runName(run.number ?? 0, run.workflow_name) : null;
    }
    default:
      return null;
  }
}

/**
 * The changes with the names of what their ids point to. Most rows hold no id (a project's name and status), so
 * they are checked first and returned as they are, without a lookup or a copy: this runs on every audited write.
 */
async function withNames(repos: Repositories, orgId: string, changes: AuditChanges): Promise<AuditChanges> {
  const isReference = (value: unknown) => typeof value === 'string' && REFERENCE.test(value);
  if (!Object.values(changes).some((c) => isReference(c.old) || isReference(c.new))) return changes;
  const named: AuditChanges = {};
  for (const [field, change] of Object.entries(changes)) {
    const [oldName, newName] = await Promise.all([nameOf(repos, orgId, change.old), nameOf(repos, orgId, change.new)]);
    named[field] = { ...change, ...(oldName === null ? {} : { old_label: oldName }), ...(newName === null ? {} : { new_label: newName }) };
  }
  return named;
}

export interface AuditEntry {
  action: AuditAction;
  target?: AuditTarget | null;
  changes?: AuditChanges | null;
  outcome?: AuditOutcome;
  at: number;
}

/**
 * Writes one audit row inside the caller's transaction, so the row exists exactly when the change does.
 * The actor's label is copied: the row still names them after they are renamed or removed.
 */
export async function recordAudit(repos: Repositories, actor: Actor, entry: AuditEntry): Promise<void> {
  const user = actor.type === 'user' ? actor : null;
  const changes = entry.changes && Object.keys(entry.changes).length > 0 ? JSON.stringify(await withNames(repos, actor.orgId, entry.changes)) : null;
  await repos.audit.insert({
    id: newId('aud'),
    org_id: actor.orgId,
    occurred_at: entry.at,
    actor_type: actor.type,
    actor_id: user?.userId ?? null,
    actor_label: user ? user.label : (actor.label ?? actor.type),
    api_key_id: user?.keyId ?? null,
    session_id: user?.sessionId ?? null,
    action: entry.action,
    target_type: entry.target?.type ?? null,
    target_id: entry.target?.id ?? null,
    target_label: entry.target?.label ?? null,
    source: actor.context.source,
    ip: actor.context.ip,
    user_agent: actor.context.userAgent,
    request_id: actor.context.requestId,
    outcome: entry.outcome ?? 'success',
    changes,
  });
}

/** The fields whose values differ between two records, as old → new. */
export function diffChanges<T extends Record<string, unknown>>(before: T, after: Partial<T>, fields: readonly (keyof T & string)[]): AuditChanges {
  const changes: AuditChanges = {};
  for (const field of fields) {
    if (field in after && after[field] !== before[field]) changes[field] = { old: before[field] ?? null, new: after[field] ?? null };
  }
  return changes;
}

/** A created record's fields, as null → value. */
export function createdChanges(values: Record<string, unknown>): AuditChanges {
  const changes: AuditChanges = {};
  for (const [field, value] of Object.entries(values)) if (value !== undefined && value !== null) changes[field] = { old: null, new: value };
  return changes;
}
