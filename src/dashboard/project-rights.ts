import type { UserActor } from '../services/access/actor.js';
import { isWritable, workspaceReadOnlyError } from '../services/access/workspace.js';
import type { Services } from '../services/index.js';
import type { ProjectRights } from '../services/projects/projects-service.js';
import { memberOptions, type MemberOption } from './members-options.js';

/**
 * For a form on a project's page, checked before the form is read: 404 when the project is hidden from the
 * person, then the 403 of a right they lack on it, then the read-only 403 (CONTRACT 1's order, as the API's
 * auth hook asks). The services decide the same again.
 */
export async function authorizeProjectChange(services: Pick<Services, 'projects'>, actor: UserActor, projectId: string, right: 'write' | 'manage'): Promise<void> {
  await services.projects.requireChange(actor, projectId, right);
  if (!isWritable(actor)) throw workspaceReadOnlyError(actor.workspace);
}

/** The controls a person is offered on a project: their rights, while the workspace takes changes. */
export function offered(actor: UserActor, rights: ProjectRights): { write: boolean; manage: boolean } {
  const writable = isWritable(actor);
  return { write: rights.write && writable, manage: rights.manage && writable };
}

/** The members who may be assigned work in the project: all of them, or (private) those who can see it. */
export async function assigneeOptions(services: Pick<Services, 'users' | 'collaborators'>, actor: UserActor, projectId: string): Promise<MemberOption[]> {
  const [members, assignable] = await Promise.all([memberOptions(services, actor), services.collaborators.assignableIds(actor, projectId)]);
  return assignable === null ? members : members.filter((m) => assignable.has(m.value));
}
