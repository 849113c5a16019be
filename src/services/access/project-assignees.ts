import type { ProjectRow } from '../../db/schema.js';
import type { Repositories } from '../../db/repositories/index.js';
import { fieldError } from '../../errors.js';
import { seesEveryProject } from './project-access.js';

export const NOT_A_COLLABORATOR = 'not a collaborator of this private project; add them as a collaborator first';

/**
 * Of `userIds`, the members who could not see `projectId` if it were private: neither admins, owners nor its
 * collaborators. Ids of no member are left out (the caller checks membership).
 */
export async function unseeingUsers(repos: Repositories, orgId: string, projectId: string, userIds: readonly string[]) {
  const ids = [...new Set(userIds)];
  if (ids.length === 0) return [];
  const users = (await repos.users.findByIds(orgId, ids)).filter((u) => !seesEveryProject(u.role));
  const collaborators = await repos.collaborators.usersAmong(orgId, projectId, users.map((u) => u.id));
  return users.filter((u) => !collaborators.has(u.id));
}

/** CONTRACT 15: in a private project an assignee must be able to see it; 400 naming `field` otherwise. */
export async function requireAssigneeSees(repos: Repositories, orgId: string, project: Pick<ProjectRow, 'id' | 'visibility'>, userId: string, field: string): Promise<void> {
  if (project.visibility !== 'private') return;
  if ((await unseeingUsers(repos, orgId, project.id, [userId])).length > 0) throw fieldError(field, NOT_A_COLLABORATOR);
}

/** Everyone the project's open tasks and its workflows' steps name: who must see it before it goes private. */
export async function namedAssignees(repos: Repositories, orgId: string, projectId: string): Promise<string[]> {
  return [...(await repos.tasks.openAssignees(orgId, projectId)), ...(await repos.workflows.stepAssignees(orgId, projectId))];
}
