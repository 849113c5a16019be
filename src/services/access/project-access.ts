import type { ProjectRole, ProjectRow, ProjectVisibility, Role } from '../../db/schema.js';
import type { Repositories } from '../../db/repositories/index.js';
import { errors } from '../../errors.js';
import { scopeAllows, type Action } from './permissions.js';
import type { Actor } from './actor.js';
import type { ResourceKind } from '../../schemas/access.js';
import { requireWritable } from './workspace.js';

/**
 * Rights on one project (CONTRACT 15), decided here once for the API, the dashboard, the CLI and the jobs.
 *
 * A person's right on a project they may see is the higher of their organisation role's (viewer reads,
 * member writes, admin and owner do everything) and their project role's (viewer reads, editor writes,
 * manager also manages: visibility, collaborators, deletion). A private project is seen only by its
 * collaborators, admins and owners; anyone else is told it does not exist (404, never 403).
 */
export type ProjectRight = 'read' | 'write' | 'manage';

const RIGHT_LEVEL: Record<ProjectRight, number> = { read: 1, write: 2, manage: 3 };
const PROJECT_ROLE_LEVEL: Record<ProjectRole, number> = { viewer: 1, editor: 2, manager: 3 };
const ORG_ROLE_LEVEL: Record<Role, number> = { viewer: 1, member: 2, admin: 4, owner: 4 };

/** Admins and owners see and do everything on every project. */
export const seesEveryProject = (role: Role): boolean => ORG_ROLE_LEVEL[role] >= 4;
export const EVERY_PROJECT_ROLES: readonly Role[] = (['owner', 'admin'] as const).filter(seesEveryProject);

/** The right an action on a project's resources needs: deleting the project manages it; other changes write. */
export function rightFor(resource: ResourceKind, action: Action): ProjectRight {
  if (action === 'read') return 'read';
  return resource === 'projects' && action === 'delete' ? 'manage' : 'write';
}

export function projectRoleAllows(role: Role, projectRole: ProjectRole | null, right: ProjectRight): boolean {
  const level = Math.max(ORG_ROLE_LEVEL[role], projectRole === null ? 0 : PROJECT_ROLE_LEVEL[projectRole]);
  return level >= RIGHT_LEVEL[right];
}

export function projectVisible(role: Role, visibility: ProjectVisibility, projectRole: ProjectRole | null): boolean {
  return visibility !== 'private' || projectRole !== null || seesEveryProject(role);
}

/**
 * The user whose visibility a list or count applies (CONTRACT 15), for the repositories' predicate; null for
 * those who see every project (admins, owners, the operator's CLI, the service's own jobs).
 */
export function projectViewer(actor: Actor): string | null {
  return actor.type === 'user' && !seesEveryProject(actor.role) ? actor.userId : null;
}

/** A project as one person may use it: the row, their project role and what they may do. */
export interface ProjectAccess {
  readonly project: ProjectRow;
  readonly projectRole: ProjectRole | null;
  can(right: ProjectRight): boolean;
}

const OPERATOR_ACCESS = { can: () => true } as const;
const KEY_SCOPE_REFUSAL = 'this API key is not allowed to perform this action';

/**
 * Reads the project and decides. Unknown or invisible: 404 `not_found` (naming `what`, the thing asked for).
 * A key whose scope does not cover the resource, or a right the person lacks on the project: 403 `forbidden`;
 * then, for a change, a read-only workspace's 403. Reading it in the caller's transaction keeps the decision
 * and the change together.
 */
export async function requireProject(
  repos: Repositories,
  actor: Actor,
  projectId: string,
  resource: ResourceKind,
  action: Action,
  what = 'project',
): Promise<ProjectAccess> {
  const access = await projectAccess(repos, actor, projectId);
  if (!access) throw errors.notFound(what);
  requireRight(actor, access, resource, action);
  if (action !== 'read') await requireWritable(repos, actor);
  return access;
}

/**
 * The read-only check a change on a project's work makes before anything else, for those whose rights the
 * project cannot narrow (admins, owners, operators): their 403 `workspace_read_only` comes before any 400, as
 * CONTRACT 1 orders it. Anyone else's rights are decided on the project first (a role that cannot act hears
 * `forbidden`, not the state), so `requireProject` checks the state for them, right after their rights.
 */
export async function requireWritableUpFront(repos: Repositories, actor: Actor): Promise<void> {
  if (actor.type === 'user' && !seesEveryProject(actor.role)) return;
  await requireWritable(repos, actor);
}

/** The project as the actor may see it, or undefined when it does not exist for them (unknown or private). */
export async function projectAccess(repos: Repositories, actor: Actor, projectId: string): Promise<ProjectAccess | undefined> {
  if (actor.type !== 'user') {
    const project = await repos.projects.findById(actor.orgId, projectId);
    return project && { project, projectRole: null, ...OPERATOR_ACCESS };
  }
  const found = await repos.projects.findWithRole(actor.orgId, projectId, actor.userId);
  if (!found) return undefined;
  const { project_role: projectRole, ...project } = found;
  if (!projectVisible(actor.role, project.visibility, projectRole)) return undefined;
  return { project, projectRole, can: (right) => projectRoleAllows(actor.role, projectRole, right) };
}

/** Throws 403 unless the actor's key scope covers the call and their rights on the project allow it. */
export function requireRight(actor: Actor, access: ProjectAccess, resource: ResourceKind, action: Action, right = rightFor(resource, action)): void {
  if (actor.type !== 'user') return;
  requireScope(actor, resource, action);
  if (!access.can(right)) throw errors.forbidden(refusal(actor.role, access.projectRole, right));
}

/** Names what is missing, in the words the dashboard and the API both show. */
function refusal(role: Role, projectRole: ProjectRole | null, right: ProjectRight): string {
  const held = projectRole === null ? `your role (${role})` : `your role (${role}) and your project role (${projectRole})`;
  const needed = right === 'manage' ? 'the project\'s manager role' : 'the editor role on this project';
  return `${held} do${projectRole === null ? 'es' : ''} not allow this action; it needs ${needed}, an admin or an owner`;
}

/**
 * The check for something under a project (a task, workflow, run or event) read or changed by id: those who
 * see every project need no read of it (only their key's scope is checked); anyone else is told the thing
 * (`what`) does not exist when its project is hidden from them, and refused (403) when their rights fall short.
 */
export async function requireUnderProject(
  repos: Repositories,
  actor: Actor,
  projectId: string,
  what: string,
  resource: ResourceKind,
  action: Action,
): Promise<void> {
  if (actor.type !== 'user') return;
  if (seesEveryProject(actor.role)) return requireScope(actor, resource, action);
  const access = await projectAccess(repos, actor, projectId);
  if (!access) throw errors.notFound(what);
  requireRight(actor, access, resource, action);
  if (action !== 'read') await requireWritable(repos, actor);
}

/** The key-scope half of a check whose role half is decided per project (requireProject, requireUnderProject). */
export function requireScope(actor: Actor, resource: ResourceKind, action: Action): void {
  if (actor.type === 'user' && !scopeAllows(actor.scope, resource, action)) throw errors.forbidden(KEY_SCOPE_REFUSAL);
}
